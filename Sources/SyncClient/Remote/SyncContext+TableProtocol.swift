import Foundation
import GRDB

extension SyncContext {
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

    /// Speaks `choice` from now on (waiting for a running sync to end first): another protocol than
    /// the store last spoke reads every row again at the next pull; `auto` keeps the one found out or
    /// chosen before, or asks the service at the next sync.
    public func setTableProtocol(_ choice: ProtocolChoice) async throws(SyncError) {
        await jobs.waitUntilIdle()
        let spoken = try await write { [store] db in try Self.bindProtocol(db, store: store, to: choice) }
        monitor.protocolChoice = choice
        monitor.tableProtocol = spoken
        transport = transport.map { $0.speaking(spoken ?? .v2) }
    }

    /// The transport, speaking the remote's protocol: with `auto`, the first sync asks the service
    /// which one it speaks (with one row of `table`) and keeps the answer.
    func speakingTransport(_ transport: HTTPTransport, table: String) async throws(SyncError) -> HTTPTransport {
        if let tableProtocol {
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
        if self.transport?.baseURL == transport.baseURL { self.transport = speaking }
        return speaking
    }
}
