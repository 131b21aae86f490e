import Foundation
import SyncProtocol
import Testing

@testable import SyncClient

/// A fresh folder under the system's temporary directory, one per test.
struct TemporaryFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "todosync-client-tests/" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }
}

/// A remote address where nothing listens (port 1 on loopback refuses at once).
let unreachableURL = URL(string: "http://127.0.0.1:1")!

extension SyncContext {
    /// A context on `folder/store.sqlite`.
    static func temporary(
        in folder: TemporaryFolder, remote: URL? = unreachableURL, name: String = "store.sqlite",
        tables: [TableDescription] = [], policy: ConflictPolicy = .ask,
        pushWindow: Int = SyncConfiguration.defaultPushWindow
    ) throws -> SyncContext {
        try SyncContext(
            path: folder.file(name), tables: tables,
            configuration: SyncConfiguration(
                remoteURL: remote, conflictPolicy: policy, pushWindow: pushWindow))
    }
}

/// The store of `context` (`folder/store.sqlite`) reopened with the default deadlines, as after a
/// restart of the app: after a test's deliberately short deadline, a retry on a loaded machine
/// must not meet it too.
func reopened(_ context: SyncContext, in folder: TemporaryFolder, remote: URL) async throws -> SyncContext {
    try await context.close()
    return try SyncContext.temporary(in: folder, remote: remote)
}

extension Item {
    var text: String? { self["text"]?.stringValue }
    var version: String? { self["version"]?.stringValue }
}

/// The kinds and states of the queue, in push order.
func queueShape(_ context: SyncContext) throws -> [String] {
    try context.operations().map { "\($0.kind.rawValue) \($0.itemId) \($0.state.rawValue)" }
}
