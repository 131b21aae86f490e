import Foundation
import GRDB
import SyncProtocol
import TableService
import TestSupport

@testable import SyncClient

extension TestService {
    /// The service these tests sync with: `todoitem` and `tag` on a SQLite file in `folder`.
    static func forSync(
        in folder: TemporaryFolder, applicationKey: String? = nil, signIn: SignIn? = nil
    ) async throws -> TestService {
        try await sqlite(in: folder, tables: ["todoitem", "tag"]) { configuration in
            configuration.applicationKey = applicationKey
            configuration.signIn = signIn
        }
    }
}

extension TestService {
    /// Items `i0...` ("base i") pulled by `context`, then changed on the service ("server i") and
    /// in `context` ("client i"): under policy ask, its next push leaves operations 1...count in conflict.
    func changeOnBothSides(_ count: Int, pulledBy context: SyncContext) async throws {
        for index in 0..<count {
            try await rest.insert(["id": .string("i\(index)"), "text": .string("base \(index)"), "complete": false])
        }
        _ = try await context.table("todoitem").pull()
        for index in 0..<count {
            _ = try await rest.patch("i\(index)", ["text": .string("server \(index)")])
            try await context.table("todoitem").update(["id": .string("i\(index)"), "text": .string("client \(index)")])
        }
    }
}

/// Test access to the service's SQLite file, for states the protocol cannot make (equal `updatedAt`).
func withServiceDatabase<T>(_ service: TestService, _ body: (Database) throws -> T) throws -> T {
    let queue = try sideConnection(service.sqlitePath ?? "")
    defer { try? queue.close() }
    return try queue.write(body)
}
