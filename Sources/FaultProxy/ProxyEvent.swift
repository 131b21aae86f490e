/// One request that went through the proxy, and what the proxy did to it.
public struct ProxyEvent: Sendable, Hashable, CustomStringConvertible {
    /// 1 for the first request the proxy read.
    public var sequence: Int
    public var method: String
    /// The path without the query string.
    public var path: String
    public var fault: Fault
    /// The service's status (the first one for a duplicate); nil when the request never reached it.
    public var upstreamStatus: Int?
    /// What went wrong inside the proxy (the service unreachable...), if anything.
    public var failure: String?

    public var description: String {
        "#\(sequence) \(method) \(path) → \(fault)" + (upstreamStatus.map { " (service: \($0))" } ?? "")
            + (failure.map { " [\($0)]" } ?? "")
    }
}
