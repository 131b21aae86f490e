/// A path pattern such as `/tables/:table/:id` or `/public/*`.
///
/// `:name` matches one segment and captures it; a final `*` matches the rest of the path
/// (captured as `parameters["*"]`, segments joined by `/`).
struct RoutePattern: Sendable, Equatable {
    enum Component: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest
    }

    let components: [Component]
    /// The pattern as written, such as `/tables/:table/:id`.
    let text: String

    init(_ pattern: String) {
        text = pattern
        components = pattern.split(separator: "/").map { part in
            if part == "*" { return .rest }
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            return .literal(String(part))
        }
    }

    /// The captured parameters when `segments` match, `nil` otherwise.
    func match(_ segments: [String]) -> [String: String]? {
        // Most routes differ from a path in length: refused before a dictionary is made for them.
        if components.last != .rest, segments.count != components.count { return nil }
        var parameters: [String: String] = [:]
        for (index, component) in components.enumerated() {
            switch component {
            case .rest:
                parameters["*"] = segments[index...].joined(separator: "/")
                return parameters
            case .literal(let literal):
                guard index < segments.count, segments[index] == literal else { return nil }
            case .parameter(let name):
                guard index < segments.count else { return nil }
                parameters[name] = segments[index]
            }
        }
        return segments.count == components.count ? parameters : nil
    }
}
