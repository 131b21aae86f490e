// Serves what the HTTP benchmark measures: the project's Public/ files, and a page with a
// 50-row table rendered from templates on every request, as the dashboard's todo list is:
// the page template per request, each row from its own template through a FragmentCache.
// Writes the rendered page to a file so that nginx can serve the very same bytes. Prints the
// port, then runs until killed.
// With --render-only it prints the time to render the page in-process instead: with every
// row rendered afresh (cold), and with the rows' HTML remembered (warm).
import Foundation
import HTTPServer
import Views

/// One table row; everything the row template shows.
struct BenchRow: Hashable, Sendable {
    var id: String
    var text: String
    var complete: Bool
    var badge: String?

    /// The rows a controller would read from the store for this page.
    static func page() -> [BenchRow] {
        (1...50).map { n in
            BenchRow(
                id: "2e56ae14-d1b5-42c4-b5ba-" + String(repeating: "0", count: 12 - String(n).count) + String(n),
                text: "Todo number \(n) <with> \"markup\" & ampersands", complete: n % 3 == 0,
                badge: n % 7 == 0 ? "update" : nil)
        }
    }
}

let arguments = CommandLine.arguments.filter { $0 != "--render-only" }
guard arguments.count == 4 else {
    FileHandle.standardError.write(
        Data("usage: http-bench [--render-only] PUBLIC_DIR TEMPLATES_DIR RENDERED_PAGE_OUT\n".utf8))
    exit(2)
}
let files = StaticFiles(folder: URL(fileURLWithPath: arguments[1]))
let templates = try TemplateLibrary(folder: URL(fileURLWithPath: arguments[2]), required: ["page", "row"])
let rowCache = FragmentCache<BenchRow>(templates: templates, template: "row")

@Sendable func renderPage(rows: FragmentCache<BenchRow>) -> String {
    templates.render("page", ["title": "Todos", "rows": rows.render(BenchRow.page())])
}

try Data(renderPage(rows: rowCache).utf8).write(to: URL(fileURLWithPath: arguments[3]))

if CommandLine.arguments.contains("--render-only") {
    let rounds = Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 2000
    func microseconds(_ body: () -> Void) -> Double {
        let took = ContinuousClock().measure { for _ in 0..<rounds { body() } }
        return (Double(took.components.seconds) * 1e6 + Double(took.components.attoseconds) / 1e12) / Double(rounds)
    }
    let cold = microseconds {
        _ = renderPage(rows: FragmentCache<BenchRow>(templates: templates, template: "row"))
    }
    let warm = microseconds { _ = renderPage(rows: rowCache) }
    let rowsOnly = microseconds { _ = BenchRow.page() }
    print(String(format: "%.1f %.1f %.1f", cold, warm, rowsOnly))
    exit(0)
}

var router = Router()
router.get("/public/*") { try files.respond($0) }
router.get("/page") { _ in .html(renderPage(rows: rowCache)) }
let server = try HTTPServer(configuration: .init(port: 0), responder: router.buildResponder())
print(server.port)
fflush(nil)
while true { sleep(3600) }
