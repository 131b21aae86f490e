import ArgumentParser
import Foundation
import HTTPServer
import SyncClient
import Synchronization
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

/// `--push-window`, on the dashboard and the scripting client.
struct PushWindowOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "How many changes a push keeps on the wire at once, 1 to \(SyncConfiguration.maximumPushWindow) "
                + "(default \(SyncConfiguration.defaultPushWindow); 1 sends them one by one in queue order). "
                + "The dashboard saves it in its settings.",
            valueName: "n"))
    var pushWindow: Int?

    func validate() throws {
        if let pushWindow, SyncConfiguration.clampedPushWindow(pushWindow) != pushWindow {
            throw ValidationError(
                "--push-window must be from 1 to \(SyncConfiguration.maximumPushWindow), not \(pushWindow).")
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

/// Calls a handler on every SIGINT or SIGTERM while it lives (instead of the default of ending the
/// process at once), so a command can stop its work cleanly.
final class SignalWatch {
    private final class Shared: Sendable {
        let state = Mutex<(fired: Bool, handler: (@Sendable () -> Void)?)>((false, nil))
    }

    private let shared = Shared()
    private let sources: [any DispatchSourceSignal]

    init() {
        let queue = DispatchQueue(label: "todosync.signals")
        sources = [SIGINT, SIGTERM].map { signal in
            Foundation.signal(signal, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: signal, queue: queue)
        }
        for source in sources {
            source.setEventHandler { [shared] in
                let handler = shared.state.withLock { state in
                    state.fired = true
                    return state.handler
                }
                handler?()
            }
            source.resume()
        }
    }

    /// Whether a signal came.
    var fired: Bool { shared.state.withLock { $0.fired } }

    /// What to do on a signal (replaces the previous handler); called at once when one already came.
    func onSignal(_ handler: @escaping @Sendable () -> Void) {
        let fired = shared.state.withLock { state in
            state.handler = handler
            return state.fired
        }
        if fired { handler() }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

/// Prints a line at once, also when standard output is a pipe (start-up lines are read by scripts).
func announce(_ line: String) {
    print(line)
    fflush(nil)
}
