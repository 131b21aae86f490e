import Foundation

/// The address to print for a server bound to `host`, one a browser on another machine can open:
/// a wildcard (`0.0.0.0`, `::`) is replaced by this machine's first address that is not loopback
/// (its host name when it has none).
public enum BrowserAddress {
    public static func url(host: String, port: Int, scheme: String = "http") -> String {
        let shown: String
        switch host {
        case "0.0.0.0": shown = firstAddress(family: AF_INET) ?? ProcessInfo.processInfo.hostName
        case "::": shown = firstAddress(family: AF_INET6).map { "[\($0)]" } ?? ProcessInfo.processInfo.hostName
        default: shown = host.contains(":") ? "[\(host)]" : host
        }
        return "\(scheme)://\(shown):\(port)"
    }

    /// Whether `host` can be reached from this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// This machine's first interface address of `family` that is up and not loopback.
    private static func firstAddress(family: Int32) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, Int32(address.pointee.sa_family) == family,
                flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let size = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, size, &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // A link-local IPv6 address needs its interface (`%eth0`), which browsers do not take.
            if family == AF_INET6, text.lowercased().hasPrefix("fe80") { continue }
            return text
        }
        return nil
    }
}
