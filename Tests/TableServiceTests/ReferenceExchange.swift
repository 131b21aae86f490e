import Foundation

/// One captured exchange of `shared/spec/reference-server/*.txt`: the header comment, the exact
/// request and the exact response of the official server.
struct ReferenceExchange: Sendable {
    struct Message: Sendable {
        /// `GET /tables/todoitem HTTP/1.1` or `HTTP/1.1 200 OK`.
        var startLine: String
        var headers: [(name: String, value: String)]
        var body: String

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    let name: String
    /// The `# captured` time, to the second.
    let captured: String
    let request: Message
    let response: Message

    var method: String { String(request.startLine.split(separator: " ")[0]) }
    /// The request target as sent (path and percent-encoded query).
    var target: String { String(request.startLine.split(separator: " ")[1]) }
    var status: Int { Int(response.startLine.split(separator: " ")[1])! }

    /// Whether the request names a protocol version (header or query), as v2 clients do.
    var hasAPIVersion: Bool {
        request.header("ZUMO-API-VERSION") != nil || target.lowercased().contains("zumo-api-version=")
    }

    /// The folder of captured exchanges: `$REFERENCE_SERVER_DIR`, or `<repo>/../shared/spec/reference-server`.
    static func folder(filePath: String = #filePath) -> URL {
        if let override = ProcessInfo.processInfo.environment["REFERENCE_SERVER_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        var repository = URL(fileURLWithPath: filePath)
        for _ in 0..<3 { repository.deleteLastPathComponent() }
        // The worktree may sit next to `shared` (…/wt-service) or inside a checkout named otherwise.
        for candidate in [
            repository.deletingLastPathComponent(), repository.deletingLastPathComponent().deletingLastPathComponent(),
        ] {
            let folder = candidate.appendingPathComponent("shared/spec/reference-server")
            if FileManager.default.fileExists(atPath: folder.path) { return folder }
        }
        return repository.deletingLastPathComponent().appendingPathComponent("shared/spec/reference-server")
    }

    /// Every exchange file in `folder` (the client session log, in another format, is left out).
    static func loadAll(from folder: URL = folder()) throws -> [ReferenceExchange] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".txt") && !$0.hasPrefix("jsclient") }
            .sorted()
        return try names.map {
            try parse(String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8), name: $0)
        }
    }

    static func parse(_ text: String, name: String) throws -> ReferenceExchange {
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n")
        guard let requestMarker = lines.firstIndex(of: "=== REQUEST ==="),
            let responseMarker = lines.firstIndex(of: "=== RESPONSE ==="),
            let captured = lines.first(where: { $0.hasPrefix("# captured ") })
        else { throw ParseError(file: name) }
        let time = String(captured.dropFirst("# captured ".count).split(separator: " ")[0])
        return ReferenceExchange(
            name: String(name.dropLast(4)), captured: time,
            request: try message(lines[(requestMarker + 1)..<responseMarker], file: name),
            response: try message(lines[(responseMarker + 1)...], file: name))
    }

    private static func message(_ lines: ArraySlice<String>, file: String) throws -> Message {
        var rest = lines.drop { $0.isEmpty }
        guard let startLine = rest.first else { throw ParseError(file: file) }
        rest = rest.dropFirst()
        var headers: [(String, String)] = []
        while let line = rest.first, !line.isEmpty {
            rest = rest.dropFirst()
            guard let colon = line.firstIndex(of: ":") else { throw ParseError(file: file) }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let body = rest.dropFirst().joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        return Message(startLine: startLine, headers: headers, body: body)
    }

    struct ParseError: Error, CustomStringConvertible {
        let file: String
        var description: String { "\(file) is not in the === REQUEST === / === RESPONSE === format" }
    }
}
