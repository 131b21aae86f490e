import Foundation

/// The CRC-32 of zlib and PNG (IEEE 802.3), which every backup file ends with so that a file cut
/// short or changed on disk is found before it is restored.
///
/// Written here rather than taken from a library: Foundation on Linux has none, and the package
/// links no zlib; a table-driven CRC is a dozen lines.
public struct CRC32: Sendable {
    private static let table: [UInt32] = (0..<256).map { byte in
        var value = UInt32(byte)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private var state: UInt32 = 0xFFFF_FFFF

    public init() {}

    /// The checksum of the bytes given so far.
    public var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// Adds `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        Self.table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        state = crc
    }

    /// Adds `data`.
    public mutating func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// The checksum of `data`.
    public static func of(_ data: Data) -> UInt32 {
        var crc = CRC32()
        crc.update(data)
        return crc.value
    }
}
