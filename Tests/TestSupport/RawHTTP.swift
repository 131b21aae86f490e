import Foundation

/// Sends raw bytes to a loopback port and reads until the server closes or a timeout passes:
/// for requests URLSession refuses to make (a body on GET, a foreign `Host`, malformed bytes).
public enum RawHTTP {
    /// The connection could not be made.
    public struct Failure: Error {}

    /// Like ``exchange(port:_:timeoutSeconds:)``, waiting on a thread of its own rather than on
    /// one of Swift's few cooperative threads, which the server's asynchronous handlers need.
    public static func send(port: Int, _ text: String, timeoutSeconds: Int = 5) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try exchange(port: port, text, timeoutSeconds: timeoutSeconds) })
            }.start()
        }
    }

    public static func exchange(port: Int, _ text: String, timeoutSeconds: Int = 5) throws -> String {
        try exchange(port: port, Data(text.utf8), timeoutSeconds: timeoutSeconds)
    }

    public static func exchange(port: Int, _ bytes: Data, timeoutSeconds: Int = 5) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure() }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure() }
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { break }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
