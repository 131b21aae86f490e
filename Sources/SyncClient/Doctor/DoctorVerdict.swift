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
