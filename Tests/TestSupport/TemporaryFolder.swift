import Foundation

/// A fresh folder under the system's temporary directory, one per test.
public struct TemporaryFolder: Sendable {
    /// The folder's path.
    public let path: String

    /// Creates `…/todosync-tests/<UUID>`.
    public init() throws {
        path = NSTemporaryDirectory() + "todosync-tests/" + UUID().uuidString
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
