import ArgumentParser
import FaultProxy
import Foundation
import ServiceLifecycle

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
            """
    )

    @Option(help: "Port to listen on, on 127.0.0.1 (0 picks a free one).")
    var listen = 8091

    @Option(help: "The service to forward to, such as http://127.0.0.1:8090 (loopback only).")
    var to: String

    @Option(help: "A fault rule (repeatable); see above.")
    var fault: [String] = []

    @Option(help: "Seed of the random choices (printed at start; a random one when omitted).")
    var seed: UInt64?

    @Flag(help: "Do not log each request.")
    var quiet = false

    func validate() throws {
        guard (0...65535).contains(listen) else { throw ValidationError("--listen must be between 0 and 65535.") }
        for text in fault {
            do { _ = try FaultRule(parsing: text) } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let seed = self.seed ?? UInt64.random(in: 1...999_999)
        let plan = FaultPlan(try fault.map { text in try FaultRule(parsing: text) }, seed: seed)
        let proxy: FaultProxy
        do {
            proxy = try await FaultProxy(upstream: to, port: listen, plan: plan)
        } catch {
            throw ValidationError(error.description)
        }
        if !quiet { proxy.onEvent { event in announce(event.description) } }
        announce(
            "todosync proxy: \(proxy.url) → \(proxy.upstream)  (\(plan); replay with --seed \(seed); Ctrl-C stops it)")
        try await runUntilTerminated([ProxyService(proxy: proxy)])
        announce("todosync proxy stopped.")
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
