/// A check's verdict with the exchanges it is based on.
public struct DoctorResult: Sendable, Hashable, Codable {
    /// The check's name.
    public var name: String
    /// What it asked.
    public var asks: String
    /// Its verdict.
    public var verdict: DoctorVerdict
    /// Its requests and their answers.
    public var exchanges: [RecordedExchange]
}
