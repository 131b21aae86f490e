/// One check of the protocol doctor: a name, what it asks the service, the requests it makes
/// (``probe``) and a pure function from their answers to a verdict (``judge``).
public struct DoctorCheck: Sendable {
    /// Short and stable: "paging", "if-match".
    public let name: String
    /// What it asks, in a sentence.
    public let asks: String
    /// Whether it writes (it is skipped with `--read-only`).
    public let writes: Bool
    /// Makes the check's requests through `session`, in order, and returns them with their answers.
    let probe: @Sendable (DoctorSession) async throws(SyncError) -> [RecordedExchange]
    /// The verdict on the answers, from them alone.
    let judge: @Sendable (TableProtocol, [RecordedExchange]) -> DoctorVerdict
}
