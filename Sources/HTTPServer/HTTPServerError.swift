/// Why a server could not start.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    case invalidHost(String)
    case invalidPort(Int)
    case cannotBind(host: String, port: Int)
    /// The certificate or key is not one libmicrohttpd can use (or the port is taken).
    case cannotStartTLS(host: String, port: Int)
    /// This libmicrohttpd was built without TLS.
    case noTLS
    /// `--tls-cert` or `--tls-key` names a file that cannot serve.
    case unusableTLSFile(option: String, path: String, reason: String)

    public var description: String {
        switch self {
        case .invalidHost(let host):
            "'\(host)' is not an IP address to listen on; give an IPv4 or IPv6 literal such as 127.0.0.1."
        case .invalidPort(let port): "Port \(port) is out of range; use 0 to 65535."
        case .cannotBind(let host, let port):
            "Cannot listen on \(host):\(port): the port is probably in use. Stop the other program or pick another port."
        case .cannotStartTLS(let host, let port):
            "Cannot serve HTTPS on \(host):\(port): the port is in use, or --tls-cert and --tls-key are not a "
                + "certificate and its unencrypted private key in PEM."
        case .noTLS:
            "This libmicrohttpd was built without TLS; install Debian's libmicrohttpd12 (it links GnuTLS)."
        case .unusableTLSFile(let option, let path, let reason):
            "\(option) '\(path)': \(reason); give a PEM file."
        }
    }
}
