import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blocking TCP socket on loopback. This file is the proxy's only door to the C socket API:
/// every call goes through here, and errors come back as ``SocketError``.
///
/// Not `Sendable` on purpose: one thread owns a connection at a time. The listener is shared
/// (``ListeningSocket``) because `stop()` must wake a thread blocked in `accept`.
final class Socket {
    let descriptor: Int32
    private var open = true

    init(descriptor: Int32) {
        self.descriptor = descriptor
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Connects to `127.0.0.1:port` (or another IPv4 literal).
    static func connect(host: String, port: Int, timeout: Int = 30) throws(SocketError) -> Socket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        var address = try SocketAddress.ipv4(host: host, port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system("connect to \(host):\(port)", code)
        }
        let socket = Socket(descriptor: fd)
        socket.setTimeout(seconds: timeout)
        return socket
    }

    /// Reads and writes give up after `seconds` (so a stuck peer cannot hold a thread forever).
    func setTimeout(seconds: Int) {
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Up to `limit` bytes; empty at end of stream.
    func read(limit: Int = 65536) throws(SocketError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, limit, 0) }
            if count >= 0 { return Array(buffer.prefix(count)) }
            if errno == EINTR { continue }
            throw .system("recv", errno)
        }
    }

    /// Writes every byte (or throws).
    func write(_ bytes: some Collection<UInt8>) throws(SocketError) {
        let array = Array(bytes)
        var sent = 0
        while sent < array.count {
            let count = array.withUnsafeBytes {
                send(descriptor, $0.baseAddress! + sent, array.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system("send", errno)
            }
            sent += count
        }
    }

    /// Closes politely (FIN): the peer reads what was sent, then end of stream.
    func close() {
        guard open else { return }
        open = false
        Glibc.close(descriptor)
    }

    /// Closes with a reset (RST): `SO_LINGER` 0 throws away unsent data and the peer sees
    /// "connection reset by peer".
    func reset() {
        guard open else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Wakes a thread blocked reading this socket (used when the proxy stops).
    func shutdown() {
        if open { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    deinit { close() }
}

/// A listening socket on an IPv4 address; `accept` blocks until a client comes or ``shutdown()``.
final class ListeningSocket: Sendable {
    let descriptor: Int32
    let port: Int

    init(host: String, port: Int) throws(SocketError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address: sockaddr_in
        do { address = try SocketAddress.ipv4(host: host, port: port) } catch {
            Glibc.close(fd)
            throw error
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .cannotListen(host: host, port: port, code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))
    }

    /// The next client's descriptor (wrap it in a ``Socket`` on the thread that serves it), or nil
    /// once the socket was shut down.
    func accept() -> Int32? {
        while true {
            let fd = Glibc.accept(descriptor, nil, nil)
            if fd >= 0 { return fd }
            if errno == EINTR || errno == ECONNABORTED { continue }
            return nil
        }
    }

    /// Wakes `accept` (which then returns nil) and refuses new connections.
    func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    deinit { Glibc.close(descriptor) }
}

/// Why a socket call failed.
enum SocketError: Error, CustomStringConvertible {
    case system(String, Int32)
    case invalidAddress(String)
    case cannotListen(host: String, port: Int, Int32)

    var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .invalidAddress(let host): "'\(host)' is not an IPv4 address"
        case .cannotListen(let host, let port, let code):
            "cannot listen on \(host):\(port): \(String(cString: strerror(code)))"
        }
    }
}

enum SocketAddress {
    static func ipv4(host: String, port: Int) throws(SocketError) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw .invalidAddress(host) }
        return address
    }
}

/// Wakes whoever blocks on `descriptor` (reads return end of stream); used by `FaultProxy.stop()`.
func shutdownDescriptor(_ descriptor: Int32) -> Bool {
    Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) == 0
}
