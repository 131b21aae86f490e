// Serves what the HTTP benchmark measures: the project's Public/ files, and a page rendered
// from a template with a 50-row table on every request. Writes the rendered page to a file so
// that nginx can serve the very same bytes. Prints the port, then runs until killed.
// With --render-only it prints the time to build and render the page in-process instead.
import Foundation
import HTTPServer
import Views

/// The page's context, built per request as a dashboard controller would.
enum BenchPage {
    static func context() -> [String: Any] {
        let rows: [[String: Any]] = (1...50).map { n in
            [
                "id": "2e56ae14-d1b5-42c4-b5ba-\(String(format: "%012d", n))",
                "text": "Todo number \(n) <with> \"markup\" & ampersands",
                "complete": n % 3 == 0,
                "badge": n % 7 == 0 ? "update" : "",
            ]
        }
        return ["title": "Todos", "items": rows]
    }
}

let arguments = CommandLine.arguments.filter { $0 != "--render-only" }
guard arguments.count == 4 else {
    FileHandle.standardError.write(
        Data("usage: http-bench [--render-only] PUBLIC_DIR TEMPLATES_DIR RENDERED_PAGE_OUT\n".utf8))
    exit(2)
}
let files = StaticFiles(folder: URL(fileURLWithPath: arguments[1]))
let templates = try TemplateLibrary(folder: URL(fileURLWithPath: arguments[2]), required: ["page"])
try Data(templates.render("page", BenchPage.context()).utf8).write(to: URL(fileURLWithPath: arguments[3]))

if CommandLine.arguments.contains("--render-only") {
    let rounds = Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 2000
    let took = ContinuousClock().measure {
        let context = BenchPage.context()
        for _ in 0..<rounds { _ = templates.render("page", context) }
    }
    print(
        String(
            format: "%.1f",
            Double(took.components.attoseconds) / 1e12 / Double(rounds) + Double(took.components.seconds) * 1e6
                / Double(rounds)))
    exit(0)
}

var router = Router()
router.get("/public/*") { try files.respond($0) }
router.get("/page") { _ in templates.page("page", BenchPage.context()) }
let server = try HTTPServer(configuration: .init(port: 0), responder: router.buildResponder())
print(server.port)
fflush(nil)
while true { sleep(3600) }
