import Foundation
import SyncProtocol
import TestSupport
import Testing

@testable import SyncClient

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

extension SyncContext {
    /// Closes the context and opens its store at `path` again, syncing with `remote` under the
    /// usual deadlines: what follows a test of a short deadline must not depend on the machine's speed.
    func reopened(at path: String, remote: URL) async throws -> SyncContext {
        try close()
        return try SyncContext(path: path, configuration: SyncConfiguration(remoteURL: remote))
    }
}

extension Item {
    var text: String? { self["text"]?.stringValue }
    var version: String? { self["version"]?.stringValue }
}

/// The kinds and states of the queue, in push order.
func queueShape(_ context: SyncContext) throws -> [String] {
    try context.operations.all().map { "\($0.kind.rawValue) \($0.itemId) \($0.state.rawValue)" }
}
