import ArgumentParser
import Foundation
import HTTPServer
import Views

/// `--host` and `--port`.
struct ListenOptions: ParsableArguments {
    @Option(help: "Address to listen on. Only this machine can connect to the default.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    init() {}

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
    }
}

/// `--allowed-host`, on every command that starts a server.
struct AllowedHostOptions: ParsableArguments {
    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "Also answer requests for this host name (repeatable), e.g. a name the server is reached by "
                + "through a proxy. Loopback names and IP addresses are always answered; other names get 421.",
            valueName: "name"))
    var names: [String] = []

    func validate() throws {
        for name in names where name.isEmpty || name.contains("/") || name.contains(where: \.isWhitespace) {
            throw ValidationError("--allowed-host '\(name)' is not a host name; write it like todo.example.org.")
        }
    }
}

/// `--public-dir` and `--templates-dir`.
struct ResourceOptions: ParsableArguments {
    @Option(help: "Folder of CSS, scripts and icons (default: found next to the executable).")
    var publicDir: String?

    @Option(help: "Folder of HTML templates (default: found next to the executable).")
    var templatesDir: String?

    func locate() throws -> ResourceFolders {
        try ResourceFolders.locate(publicDir: publicDir, templatesDir: templatesDir)
    }
}

/// Waits for Ctrl-C (SIGINT) or SIGTERM.
func waitForTermination() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let once = SignalOnce(continuation)
        for signal in [SIGINT, SIGTERM] {
            Foundation.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .main)
            source.setEventHandler { once.fire() }
            source.resume()
            once.keep(source)
        }
    }
}

/// Resumes the waiting task on the first signal only.
private final class SignalOnce: @unchecked Sendable {
    // Touched only on the main dispatch queue (the signal sources' queue) after set-up.
    private var continuation: CheckedContinuation<Void, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
    func keep(_ source: any DispatchSourceSignal) { sources.append(source) }
    func fire() {
        continuation?.resume()
        continuation = nil
    }
}

/// Prints a line at once, also when standard output is a pipe (start-up lines are read by scripts).
func announce(_ line: String) {
    print(line)
    fflush(nil)
}
