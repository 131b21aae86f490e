import SyncProtocol

extension DoctorCheck {
    /// Whether the table has a change channel (`GET /tables/{table}/$changes`), which auto-sync then
    /// follows instead of polling. Neither answer is a fault: the official servers have none.
    static let changeChannel = DoctorCheck(
        name: "live", asks: "Does the table offer a change channel that clients can follow instead of polling?",
        writes: false,
        probe: { session throws(SyncError) in [try await session.send(.get, id: "$changes")] },
        judge: { _, exchanges in
            guard let answer = exchanges.first else { return .skipped("Nothing was asked.") }
            if answer.status == 200, case .object(let body)? = answer.json, body["cursor"]?.stringValue != nil {
                return .passed(
                    "It offers a change channel (GET /tables/{table}/$changes): with auto-sync on, todosync follows "
                        + "it and syncs within moments of a change (--live auto).")
            }
            return .passed(
                "It offers no change channel (\(answer.answerLine)): auto-sync polls it at its interval, as the "
                    + "official servers need.")
        })
}
