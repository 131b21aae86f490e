import FaultProxy
import Foundation

extension FaultProxy {
    /// `METHOD /path` of every request the proxy read, in order.
    public var requests: [String] { events.map { "\($0.method) \($0.path)" } }

    /// ``url`` as a `URL`, as a sync context takes its remote.
    public var endpoint: URL { URL(string: url)! }
}
