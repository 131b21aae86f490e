import Foundation
import Synchronization

/// What this device tells a todosync service's fleet view beyond its requests (`docs/fleet.md`):
/// its queue in `X-TodoSync-Client-State`, and its redacted support bundle when an admin asks for
/// it (`X-TodoSync-Bundle-Request: 1` on an answer).
///
/// The header is read from the store at most once a second, not per request. The bundle is made
/// and uploaded by the handler the composition root gives (``onBundleRequest(_:)``: the dashboard
/// and the command line write the bundle `todosync client bundle` writes), once per request, off
/// the sync's path.
public final class DeviceReporting: Sendable {
    /// The figures the header carries: operations waiting, seconds since the oldest was queued,
    /// conflicts waiting for a person.
    public struct Figures: Sendable, Equatable {
        public var queue: Int
        public var oldestSeconds: Int
        public var conflicts: Int

        var header: String { "queue=\(queue), oldest=\(oldestSeconds), conflicts=\(conflicts)" }
    }

    private struct State {
        var header: (value: String, read: ContinuousClock.Instant)?
        var handler: (@Sendable () async -> Void)?
        var upload: Task<Void, Never>?
    }

    private let state = Mutex(State())
    private let figures: @Sendable () -> Figures?

    /// Reports `figures` (nil when the store cannot say).
    init(figures: @escaping @Sendable () -> Figures?) {
        self.figures = figures
    }

    /// The header's value now (read again when over a second old).
    func header() -> String? {
        if let cached = state.withLock({ $0.header }), ContinuousClock.now - cached.read < .seconds(1) {
            return cached.value
        }
        guard let value = figures()?.header else { return nil }
        state.withLock { $0.header = (value, .now) }
        return value
    }

    /// Runs `handler` when the service asks for this device's support bundle.
    public func onBundleRequest(_ handler: @escaping @Sendable () async -> Void) {
        state.withLock { $0.handler = handler }
    }

    /// The service asked for the bundle: starts the handler unless an upload is under way (its
    /// answer ends the request, so the service asks no more).
    func bundleAsked() {
        state.withLock { state in
            guard let handler = state.handler, state.upload == nil else { return }
            // Unstructured: it runs beside the sync that met the request, and the owner awaits it in
            // finishUploads() before it stops.
            state.upload = Task { [weak self] in
                await handler()
                self?.state.withLock { $0.upload = nil }
            }
        }
    }

    /// Waits for an upload under way (a command finishing, a dashboard stopping).
    public func finishUploads() async {
        await state.withLock { $0.upload }?.value
    }
}
