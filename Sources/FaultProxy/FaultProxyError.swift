/// Why the proxy could not start, or a fault could not be read.
public enum FaultProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The upstream address is not an `http://` URL on loopback.
    case upstreamNotLoopback(String)
    /// The listening port is taken or out of range.
    case cannotListen(String)
    /// A `--fault` text could not be read.
    case invalidFault(String, String)

    public var description: String {
        switch self {
        case .upstreamNotLoopback(let address):
            "'\(address)' is not an http:// address on this machine. The proxy only forwards to loopback "
                + "(127.0.0.1 or localhost), for example http://127.0.0.1:8090."
        case .cannotListen(let detail):
            "The proxy cannot listen: \(detail). Pick another port, or 0 for a free one."
        case .invalidFault(let text, let reason):
            "The fault '\(text)' cannot be read: \(reason). Example: reset,method=POST,path=/tables/*,nth=2"
        }
    }
}
