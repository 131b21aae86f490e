import Foundation
import GRDB

extension Remote {
    /// Where the protocol the store last spoke with its remote is kept.
    static let protocolKey = "tableProtocol"

    /// The protocol to speak with the bound remote, in the caller's transaction: `choice` when it
    /// fixes one (another one than the store last spoke forgets the delta tokens, so that the next
    /// pulls read every row again, as after a remote switch), else the one found out before (nil:
    /// not yet).
    static func bindProtocol(_ db: Database, store: LocalStore, to choice: ProtocolChoice) throws -> TableProtocol? {
        let saved = try store.config(db, protocolKey, as: TableProtocol.self)
        guard let fixed = choice.fixed else { return saved }
        if saved != fixed {
            if let saved {
                try store.removeDeltaTokens(db)
                for table in try LocalStore.savedTables(db) {
                    try HistoryLog().recordTableEvent(
                        db, .tokenReset, table: table,
                        detail: "the table protocol changed from \(saved.label) to \(fixed.label)")
                }
            }
            try store.setConfig(db, protocolKey, fixed.rawValue)
        }
        return fixed
    }

    /// See ``SyncContext/setTableProtocol(_:)`` (which waits for the running job to end first).
    func setTableProtocol(_ choice: ProtocolChoice) async throws(SyncError) {
        let spoken = try await store.asyncWrite { [store] db in try Self.bindProtocol(db, store: store, to: choice) }
        monitor.protocolChoice = choice
        monitor.tableProtocol = spoken
        changeTransport { $0.map { $0.speaking(spoken ?? .v2) } }
    }

    /// `transport`, speaking the remote's protocol: with `auto`, the first sync asks the service
    /// which one it speaks (with one row of `table`) and keeps the answer.
    func speaking(_ transport: HTTPTransport, table: String) async throws(SyncError) -> HTTPTransport {
        if let tableProtocol = monitor.tableProtocol {
            return transport.tableProtocol == tableProtocol ? transport : transport.speaking(tableProtocol)
        }
        guard let found = try await transport.detectProtocol(table: table) else { return transport }
        try await store.asyncWrite { [store] db in
            if try store.config(db, Self.protocolKey) == nil {
                try store.setConfig(db, Self.protocolKey, found.rawValue)
            }
        }
        monitor.tableProtocol = found
        let speaking = transport.speaking(found)
        changeTransport { $0?.baseURL == transport.baseURL ? speaking : $0 }
        return speaking
    }
}
