import Foundation

/// What a server needs to speak HTTPS: its certificate chain and private key, in PEM.
///
/// libmicrohttpd's own TLS (GnuTLS, which Debian's libmicrohttpd links) does the rest: no proxy in
/// front, no other TLS library in this process's server side.
public struct TLSIdentity: Sendable, Equatable {
    /// The certificate, followed by any intermediate ones (PEM).
    public var certificate: String
    /// The private key (PEM, unencrypted).
    public var key: String

    public init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }

    /// Reads `--tls-cert` and `--tls-key`; each failure names the file and what to give instead.
    public static func read(certificate: String, key: String) throws(HTTPServerError) -> TLSIdentity {
        let certificateText = try readPEM(certificate, label: "CERTIFICATE", option: "--tls-cert")
        let keyText = try readPEM(key, label: "PRIVATE KEY", option: "--tls-key")
        return TLSIdentity(certificate: certificateText, key: keyText)
    }

    private static func readPEM(_ path: String, label: String, option: String) throws(HTTPServerError) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw .unusableTLSFile(option: option, path: path, reason: "it cannot be read")
        }
        guard text.contains("-----BEGIN ") && text.contains(label) else {
            throw .unusableTLSFile(option: option, path: path, reason: "it holds no PEM \(label.lowercased())")
        }
        return text
    }
}
