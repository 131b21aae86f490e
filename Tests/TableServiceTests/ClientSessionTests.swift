import Foundation
import HTTPTypes
import Testing

/// Replays the official JavaScript client's offline-sync session (`jsclient-offline-sync-session.txt`,
/// the server's log of it) against our service: the same statuses and bodies, so that client works
/// with us unchanged.
@Suite struct ClientSessionTests {
    /// The log's requests and answers as exchanges (`>>> METHOD target`, headers, body; `<<< status ETag=…`, body).
    static func exchanges() throws -> [ReferenceExchange] {
        let url = ReferenceExchange.folder().appendingPathComponent("jsclient-offline-sync-session.txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let logStart = text.range(of: "=== SERVER REQUEST LOG ===") else { return [] }
        var exchanges: [ReferenceExchange] = []
        for (index, block) in text[logStart.upperBound...].components(separatedBy: "\n>>> ").enumerated()
        where block.contains("<<< ") {
            let lines = block.trimmingCharacters(in: .newlines).components(separatedBy: "\n")
            let requestLine = lines[0].replacingOccurrences(of: ">>> ", with: "")
            guard let answerIndex = lines.firstIndex(where: { $0.hasPrefix("<<< ") }) else { continue }
            var headers: [(name: String, value: String)] = []
            var bodyLines: [String] = []
            var inBody = false
            for line in lines[1..<answerIndex] {
                if line.isEmpty { inBody = true; continue }
                if inBody { bodyLines.append(line); continue }
                guard let colon = line.firstIndex(of: ":") else { continue }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if value == "undefined" { continue }  // the log's note: these were not really sent
                headers.append((String(line[..<colon]), value))
            }
            let answer = lines[answerIndex].dropFirst(4).split(separator: " ", maxSplits: 1)
            var responseHeaders: [(name: String, value: String)] = []
            if answer.count > 1, answer[1].hasPrefix("ETag=") {
                responseHeaders.append(("ETag", String(answer[1].dropFirst(5))))
            }
            exchanges.append(
                ReferenceExchange(
                    name: "jsclient-\(index)", captured: "2026-11-21T23:16:00Z",
                    request: .init(
                        startLine: requestLine + " HTTP/1.1", headers: headers, body: bodyLines.joined(separator: "\n")),
                    response: .init(
                        startLine: "HTTP/1.1 \(answer[0]) X", headers: responseHeaders,
                        body: lines[(answerIndex + 1)...].joined(separator: "\n").trimmingCharacters(
                            in: .whitespacesAndNewlines))))
        }
        return exchanges
    }

    @Test(arguments: Backend.all) func officialJavaScriptClientSessionGetsTheSameAnswers(
        _ backend: Backend
    ) async throws {
        let exchanges = try Self.exchanges()
        #expect(exchanges.count == 16)
        try await withTestServer(backend, controlledClock: true) { server in
            var replay = Replay()
            for exchange in exchanges {
                server.clock.now = replay.clock(for: exchange)
                let request = replay.translate(exchange)
                let reply = try await server.send(
                    try #require(HTTPRequest.Method(exchange.method)), request.target, headers: request.headers,
                    body: request.body)
                let problems = replay.check(exchange, reply)
                #expect(
                    problems.isEmpty,
                    "\(exchange.name) \(exchange.method) \(exchange.target): \(problems.joined(separator: "; "))\n ours: \(reply.text)"
                )
            }
        }
    }
}
