/// What a check concluded, and why.
public struct DoctorVerdict: Sendable, Hashable, Codable {
    /// Green, red, or not run.
    public enum Outcome: String, Sendable, Hashable, Codable {
        case passed, failed, skipped
    }

    /// Green, red, or not run.
    public var outcome: Outcome
    /// One or two sentences: what the service did, and for a red one what it means for a client.
    public var explanation: String

    /// A green verdict.
    public static func passed(_ explanation: String) -> DoctorVerdict {
        .init(outcome: .passed, explanation: explanation)
    }
    /// A red verdict.
    public static func failed(_ explanation: String) -> DoctorVerdict {
        .init(outcome: .failed, explanation: explanation)
    }
    /// A check not run.
    public static func skipped(_ explanation: String) -> DoctorVerdict {
        .init(outcome: .skipped, explanation: explanation)
    }
}

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
    let probe: @Sendable (DoctorSession) async throws(SyncError) -> [DoctorExchange]
    /// The verdict on the answers, from them alone.
    let judge: @Sendable (DoctorDialect, [DoctorExchange]) -> DoctorVerdict
}

/// A check's verdict with the exchanges it is based on.
public struct DoctorResult: Sendable, Hashable, Codable {
    /// The check's name.
    public var name: String
    /// What it asked.
    public var asks: String
    /// Its verdict.
    public var verdict: DoctorVerdict
    /// Its requests and their answers.
    public var exchanges: [DoctorExchange]
}
