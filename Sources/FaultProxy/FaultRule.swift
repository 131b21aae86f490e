/// When a fault applies: a request matching the method and path pattern, optionally only the
/// nth such request (or every nth), and then with a probability drawn from the plan's seed.
public struct FaultRule: Sendable, Hashable, CustomStringConvertible {
    public var fault: Fault
    /// `GET`, `POST`...; nil matches every method.
    public var method: String?
    /// A path pattern where `*` matches any run of characters (`/tables/*`); nil matches every path.
    /// The query string is not part of the path.
    public var path: String?
    /// Only the nth matching request (1-based); nil for every one.
    public var nth: Int?
    /// Every nth matching request (the nth, 2nth...); nil for every one.
    public var every: Int?
    /// The chance (0...1) that a request that matched so far gets the fault.
    public var probability: Double

    public init(
        _ fault: Fault, method: String? = nil, path: String? = nil, nth: Int? = nil, every: Int? = nil,
        probability: Double = 1
    ) {
        self.fault = fault
        self.method = method?.uppercased()
        self.path = path
        self.nth = nth
        self.every = every
        self.probability = probability
    }

    /// Whether this rule fires on every request `later` matches, so that `later` never fires after it.
    func alwaysFires(before later: FaultRule) -> Bool {
        probability >= 1 && nth == nil && every == nil && (method == nil || method == later.method)
            && (path == nil || path == later.path)
    }

    /// Parses `FAULT[,method=M][,path=P][,nth=N][,every=N][,p=0.3]`, such as
    /// `reset,method=POST,path=/tables/*,nth=2` or `status=503,p=0.25`.
    public init(parsing text: String) throws(FaultProxyError) {
        let parts = text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        guard let first = parts.first else { throw .invalidFault(text, "it is empty") }
        self.init(try Fault(parsing: first))
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { throw .invalidFault(text, "'\(part)' is not name=value") }
            switch pair[0].lowercased() {
            case "method": method = pair[1].uppercased()
            case "path": path = pair[1]
            case "nth":
                guard let value = Int(pair[1]), value >= 1 else { throw .invalidFault(text, "nth must be 1 or more") }
                nth = value
            case "every":
                guard let value = Int(pair[1]), value >= 1 else { throw .invalidFault(text, "every must be 1 or more") }
                every = value
            case "p", "probability":
                guard let value = Double(pair[1]), (0...1).contains(value) else {
                    throw .invalidFault(text, "p must be between 0 and 1")
                }
                probability = value
            default:
                throw .invalidFault(text, "unknown condition '\(pair[0])'; use method, path, nth, every or p")
            }
        }
    }

    public var description: String {
        var text = fault.description
        if let method { text += ",method=\(method)" }
        if let path { text += ",path=\(path)" }
        if let nth { text += ",nth=\(nth)" }
        if let every { text += ",every=\(every)" }
        if probability < 1 { text += ",p=\(probability)" }
        return text
    }

    /// Whether the method and path match (the counters and the probability are the plan's business).
    func matches(method: String, path: String) -> Bool {
        if let expected = self.method, expected != method.uppercased() { return false }
        if let pattern = self.path, !Self.glob(pattern[...], path[...]) { return false }
        return true
    }

    private static func glob(_ pattern: Substring, _ text: Substring) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        if first == "*" {
            let rest = pattern.dropFirst()
            var suffix = text
            while true {
                if glob(rest, suffix) { return true }
                guard !suffix.isEmpty else { return false }
                suffix = suffix.dropFirst()
            }
        }
        guard let head = text.first, head == first else { return false }
        return glob(pattern.dropFirst(), text.dropFirst())
    }
}
