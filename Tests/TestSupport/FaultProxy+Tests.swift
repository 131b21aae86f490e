import FaultProxy
import Foundation
import Synchronization

extension FaultProxy {
    /// `METHOD /path` of every request the proxy read, in order.
    public var requests: [String] { events.map { "\($0.method) \($0.path)" } }

    /// ``url`` as a `URL`, as a sync context takes its remote.
    public var endpoint: URL { URL(string: url)! }

    /// Passes the first `count` exchanges, then holds every later answer until the client gives up
    /// (a request on the wire that never comes back). Returns the event of the first answer held.
    public func holdAnswers(after count: Int) -> TestEvent {
        let held = TestEvent()
        let seen = Mutex(0)
        intercept { _, _ in
            let number = seen.withLock { seen in
                seen += 1
                return seen
            }
            guard number > count else { return nil }
            held.signal()
            return .withhold
        }
        return held
    }
}
