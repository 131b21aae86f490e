import Foundation

/// The two salts of a write-ahead log's header: SQLite draws new ones each time it restarts the
/// log (writes it again from frame 1), so frames left from before a restart no longer match.
public struct WALSalts: Sendable, Equatable, CustomStringConvertible {
    public let first: UInt32
    public let second: UInt32

    public var description: String { String(format: "%08x-%08x", first, second) }
}

/// The running checksum of a write-ahead log: each frame's covers every frame before it.
public struct WALChecksum: Sendable, Equatable {
    var first: UInt32
    var second: UInt32
}

/// One frame of a write-ahead log: a new version of one page; the last frame of a transaction
/// (a commit frame) also gives the size of the database, in pages, after it.
public struct WALFrame: Sendable {
    public let pageNumber: UInt32
    /// The database's size in pages after this commit; 0 for a frame that is not a commit.
    public let databasePages: UInt32
    public let page: Data
}

/// The header of a write-ahead log (https://www.sqlite.org/fileformat2.html#walformat).
public struct WALHeader: Sendable, Equatable {
    public static let size = 32
    public static let frameHeaderSize = 24

    public let pageSize: Int
    public let salts: WALSalts
    /// Whether the checksums read the file's words big-endian (magic 0x377f0683) or little-endian.
    let bigEndianChecksums: Bool
    /// The checksum of the header, where the first frame's checksum starts.
    let checksum: WALChecksum

    /// The header in `bytes`, or nil when they hold none that is valid (a log never written, or
    /// one cut short).
    init?(_ bytes: Data) {
        guard bytes.count >= Self.size else { return nil }
        let magic = bytes.bigEndianUInt32(at: 0)
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { return nil }
        bigEndianChecksums = magic & 1 == 1
        let size = Int(bytes.bigEndianUInt32(at: 8))
        guard size >= 512, size <= 65536, size & (size - 1) == 0 else { return nil }
        pageSize = size
        salts = WALSalts(first: bytes.bigEndianUInt32(at: 16), second: bytes.bigEndianUInt32(at: 20))
        checksum = WALChecksum(first: bytes.bigEndianUInt32(at: 24), second: bytes.bigEndianUInt32(at: 28))
        var computed = WALChecksum(first: 0, second: 0)
        bytes.withUnsafeBytes { Self.add(UnsafeRawBufferPointer(rebasing: $0[0..<24]), bigEndianChecksums, &computed) }
        guard computed == checksum else { return nil }
    }

    var frameSize: Int { Self.frameHeaderSize + pageSize }

    /// The byte where frame `number` (from 1) starts.
    func offset(ofFrame number: Int) -> Int { Self.size + (number - 1) * frameSize }

    /// SQLite's checksum: over 32-bit words taken in pairs, each pair's sums feeding the next.
    ///
    /// Written here: SQLite keeps it private (`walChecksumBytes` in wal.c).
    static func add(_ bytes: UnsafeRawBufferPointer, _ bigEndian: Bool, _ sum: inout WALChecksum) {
        var s0 = sum.first
        var s1 = sum.second
        var index = 0
        while index + 8 <= bytes.count {
            var a = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self)
            var b = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self)
            if bigEndian {
                a = UInt32(bigEndian: a)
                b = UInt32(bigEndian: b)
            } else {
                a = UInt32(littleEndian: a)
                b = UInt32(littleEndian: b)
            }
            s0 = s0 &+ a &+ s1
            s1 = s1 &+ b &+ s0
            index += 8
        }
        sum = WALChecksum(first: s0, second: s1)
    }
}

/// Committed frames read from a write-ahead log, and where the next read goes on.
public struct WALTail: Sendable {
    public let header: WALHeader
    /// The frames of the complete transactions read, in log order.
    public let frames: [WALFrame]
    /// The number of the frame after the last one in ``frames``.
    public let nextFrame: Int
    /// The running checksum after the last frame in ``frames``.
    public let checksum: WALChecksum
}

/// Reads the committed transactions of a database's write-ahead log, for shipping them.
///
/// A frame counts when its salts are the header's and its running checksum holds; reading stops
/// at the first frame that fails (one being written, or left from before a restart), and only
/// frames up to the last commit frame before it are returned: a transaction is shipped whole or
/// not at all.
public enum WALReader {
    /// The header of the log at `path`, or nil when it has none yet.
    public static func header(path: String) throws(BackupError) -> WALHeader? {
        let file = try ReadOnlyFile(path: path)
        guard let file else { return nil }
        return WALHeader(try file.read(at: 0, count: WALHeader.size))
    }

    /// The committed frames from frame `first` (1 for the whole log), under `header`, with the
    /// running checksum after frame `first - 1` (nil: from the header's).
    public static func tail(
        path: String, header: WALHeader, from first: Int, checksum: WALChecksum?
    ) throws(BackupError) -> WALTail {
        var sum = checksum ?? header.checksum
        let empty = WALTail(header: header, frames: [], nextFrame: first, checksum: sum)
        guard let file = try ReadOnlyFile(path: path) else { return empty }
        let start = header.offset(ofFrame: first)
        let size = try file.size()
        guard size > start else { return empty }
        let bytes = try file.read(at: start, count: size - start)
        var frames: [WALFrame] = []
        var pending: [WALFrame] = []
        var committed = empty
        var number = first
        var offset = 0
        while offset + header.frameSize <= bytes.count {
            let pageNumber = bytes.bigEndianUInt32(at: offset)
            let pages = bytes.bigEndianUInt32(at: offset + 4)
            let salts = WALSalts(
                first: bytes.bigEndianUInt32(at: offset + 8), second: bytes.bigEndianUInt32(at: offset + 12))
            let stored = WALChecksum(
                first: bytes.bigEndianUInt32(at: offset + 16), second: bytes.bigEndianUInt32(at: offset + 20))
            guard pageNumber > 0, salts == header.salts else { break }
            var next = sum
            bytes.withUnsafeBytes { raw in
                WALHeader.add(
                    UnsafeRawBufferPointer(rebasing: raw[offset..<offset + 8]), header.bigEndianChecksums, &next)
                let pageStart = offset + WALHeader.frameHeaderSize
                WALHeader.add(
                    UnsafeRawBufferPointer(rebasing: raw[pageStart..<pageStart + header.pageSize]),
                    header.bigEndianChecksums, &next)
            }
            guard next == stored else { break }
            sum = next
            let pageStart = offset + WALHeader.frameHeaderSize
            pending.append(
                WALFrame(
                    pageNumber: pageNumber, databasePages: pages,
                    page: bytes.subdata(in: pageStart..<pageStart + header.pageSize)))
            number += 1
            offset += header.frameSize
            if pages != 0 {
                frames += pending
                pending.removeAll()
                committed = WALTail(header: header, frames: frames, nextFrame: number, checksum: sum)
            }
        }
        return committed
    }
}

extension Data {
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    }
}
