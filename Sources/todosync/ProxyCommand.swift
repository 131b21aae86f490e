import ArgumentParser
import FaultProxy
import Foundation
import ServiceLifecycle
import UnixSignals

/// `todosync proxy`: a fault-injecting HTTP proxy in front of a service on this machine.
struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Forward to a local service and inject faults (delays, resets, 5xx, lost answers...).",
        discussion: """
            Listens on 127.0.0.1 only and forwards only to loopback. Each --fault is a rule:
              FAULT[,method=M][,path=P][,nth=N][,every=N][,p=0.3]
            FAULT is pass, delay=MS, refuse, reset, status=5xx, drop (forward, lose the answer), truncate,
            corrupt or duplicate. The first rule that fires decides; probabilities draw from --seed,
            so a run can be replayed. Example:
              todosync proxy --listen 8091 --to http://127.0.0.1:8090 --fault drop,method=PATCH,p=0.3 --seed 7
            With --faults-file, the rules are read from that file (one per line, # starts a comment) at start
            and again on SIGHUP: faults can be switched on and off while the proxy runs (an empty file passes
            everything through). A file with a bad rule is refused and the rules in force stay.
            """
    )

    @Option(help: "Port to listen on, on 127.0.0.1 (0 picks a free one).")
    var listen = 8091

    @Option(help: "The service to forward to, such as http://127.0.0.1:8090 (loopback only).")
    var to: String

    @Option(help: "A fault rule (repeatable); see above.")
    var fault: [String] = []

    @Option(help: "A file of fault rules, one per line, read at start and again on SIGHUP (instead of --fault).")
    var faultsFile: String?

    @Option(help: "Seed of the random choices (printed at start; a random one when omitted).")
    var seed: UInt64?

    @Flag(help: "Do not log each request.")
    var quiet = false

    func validate() throws {
        guard (0...65535).contains(listen) else { throw ValidationError("--listen must be between 0 and 65535.") }
        for text in fault {
            do { _ = try FaultRule(parsing: text) } catch { throw ValidationError(error.description) }
        }
        if faultsFile != nil, !fault.isEmpty {
            throw ValidationError("--faults-file and --fault do not go together: put the rules in the file.")
        }
    }

    /// The rules of `path`: one per line, blank lines and `#` comments skipped.
    static func rules(inFile path: String) throws -> [FaultRule] {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ValidationError("--faults-file \(path) cannot be read: \(error.localizedDescription)")
        }
        var rules: [FaultRule] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let rule = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            guard !rule.isEmpty else { continue }
            do { rules.append(try FaultRule(parsing: rule)) } catch {
                throw ValidationError("--faults-file \(path), line \(number + 1): \(error.description)")
            }
        }
        return rules
    }

    func run() async throws {
        let signals = await trapTerminationSignals()
        let seed = self.seed ?? UInt64.random(in: 1...999_999)
        let rules = try faultsFile.map(Self.rules(inFile:)) ?? fault.map { text in try FaultRule(parsing: text) }
        let plan = FaultPlan(rules, seed: seed)
        let proxy: FaultProxy
        do {
            proxy = try await FaultProxy(upstream: to, port: listen, plan: plan)
        } catch {
            throw ValidationError(error.description)
        }
        if !quiet { proxy.onEvent { event in announce(event.description) } }
        announce(
            "todosync proxy: \(proxy.url) → \(proxy.upstream)  (\(plan); replay with --seed \(seed); Ctrl-C stops it)")
        Self.warnOfShadowedRules(plan)
        var services: [any Service] = [ProxyService(proxy: proxy)]
        if let faultsFile { services.append(FaultsFileReloader(proxy: proxy, path: faultsFile, seed: seed)) }
        try await runUntilTerminated(services, signals: signals)
        announce("todosync proxy stopped.")
    }

    /// Says which rules can never fire (an earlier one always fires first), and what to do.
    static func warnOfShadowedRules(_ plan: FaultPlan) {
        for (rule, earlier) in plan.shadowedRules {
            announce(
                "todosync proxy: warning: '\(rule)' never fires: '\(earlier)' before it fires on every request "
                    + "it matches, and the first rule that fires decides. Put '\(rule)' first.")
        }
    }
}

/// The proxy as a service: it forwards until a graceful shutdown.
private struct ProxyService: Service {
    let proxy: FaultProxy

    func run() async {
        try? await gracefulShutdown()
        await proxy.stop()
    }
}

/// Reads `--faults-file` again on each SIGHUP and puts its rules in force (keeping the seed); a file
/// with a bad rule is reported and the rules in force stay.
private struct FaultsFileReloader: Service {
    let proxy: FaultProxy
    let path: String
    let seed: UInt64

    func run() async {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                let plan = FaultPlan(try ProxyCommand.rules(inFile: path), seed: seed)
                proxy.setPlan(plan)
                announce("todosync proxy: \(plan)")
                ProxyCommand.warnOfShadowedRules(plan)
            } catch {
                announce("todosync proxy: \(error); the rules in force stay")
            }
        }
    }
}
