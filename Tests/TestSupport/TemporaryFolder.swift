import Foundation

/// A fresh folder under the system's temporary directory, one per test.
///
/// The folders of one test process share a root that goes when the process exits: a folder cannot
/// go with its test, since stores and servers opened in it may outlive the value (and a suite run
/// ten times left 6 GB behind).
public struct TemporaryFolder: Sendable {
    /// The folder's path.
    public let path: String

    /// `…/todosync-tests/run-<pid>-<random>`, removed at exit.
    static let root: String = {
        let root = NSTemporaryDirectory() + "todosync-tests/run-\(getpid())-\(UUID().uuidString.prefix(8))"
        atexit { try? FileManager.default.removeItem(atPath: TemporaryFolder.root) }
        return root
    }()

    /// Creates `<root>/<UUID>`.
    public init() throws {
        path = Self.root + "/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The folder as a file URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// The path of `name` in the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Deletes the folder and what it holds.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
