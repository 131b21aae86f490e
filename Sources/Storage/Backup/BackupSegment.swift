import Foundation

/// One shipped segment of a backup: the pages that one or more complete transactions changed,
/// each in its latest version, and the database's size after them. Restoring to a segment means
/// writing its pages over the state before it.
///
/// On disk (integers little-endian): `TSBACKUP`, format (u32), page size (u32), index (u64),
/// time of the newest commit in ms since 1970 (i64), WAL frames read (u32), pages (u32), database
/// size in pages (u32, 0: unchanged), then per page its number (u32) and bytes, then the byte
/// count before the trailer (u64), the CRC-32 of those bytes (u32) and `END.`. A file cut short or
/// changed fails the trailer.
public struct BackupSegment: Sendable {
    static let magic = Data("TSBACKUP".utf8)
    static let end = Data("END.".utf8)
    static let format: UInt32 = 1
    static let headerSize = 8 + 4 + 4 + 8 + 8 + 4 + 4 + 4
    static let trailerSize = 8 + 4 + 4

    public let pageSize: Int
    public let index: Int
    /// When the newest transaction in it had committed, at the latest (ms since 1970).
    public let committedAt: Int64
    /// How many WAL frames it was made of (pages changed more than once count once in ``pages``).
    public let framesRead: Int
    public let pages: [(number: UInt32, bytes: Data)]
    /// The database's size in pages after it; 0 when no commit changed it.
    public let databasePages: UInt32

    /// The segment of `frames` (complete transactions): each page's latest version only.
    public init(index: Int, committedAt: Int64, pageSize: Int, frames: [WALFrame]) {
        var latest: [UInt32: Int] = [:]
        var order: [UInt32] = []
        var size: UInt32 = 0
        for (position, frame) in frames.enumerated() {
            if latest.updateValue(position, forKey: frame.pageNumber) == nil { order.append(frame.pageNumber) }
            if frame.databasePages != 0 { size = frame.databasePages }
        }
        self.init(
            pageSize: pageSize, index: index, committedAt: committedAt, framesRead: frames.count,
            pages: order.map { ($0, frames[latest[$0]!].page) }, databasePages: size)
    }

    init(
        pageSize: Int, index: Int, committedAt: Int64, framesRead: Int, pages: [(number: UInt32, bytes: Data)],
        databasePages: UInt32
    ) {
        self.pageSize = pageSize
        self.index = index
        self.committedAt = committedAt
        self.framesRead = framesRead
        self.pages = pages
        self.databasePages = databasePages
    }

    /// The file's bytes.
    public func encoded() -> Data {
        var data = Data(capacity: Self.headerSize + pages.count * (4 + pageSize) + Self.trailerSize)
        data.append(Self.magic)
        data.appendLittleEndian(Self.format)
        data.appendLittleEndian(UInt32(pageSize))
        data.appendLittleEndian(UInt64(index))
        data.appendLittleEndian(UInt64(bitPattern: committedAt))
        data.appendLittleEndian(UInt32(framesRead))
        data.appendLittleEndian(UInt32(pages.count))
        data.appendLittleEndian(databasePages)
        for page in pages {
            data.appendLittleEndian(page.number)
            data.append(page.bytes)
        }
        let crc = CRC32.of(data)
        data.appendLittleEndian(UInt64(data.count))
        data.appendLittleEndian(crc)
        data.append(Self.end)
        return data
    }

    /// The segment in `data` (the file at `path`), checked whole.
    public static func decode(_ data: Data, path: String) throws(BackupError) -> BackupSegment {
        func corrupt(_ reason: String) -> BackupError { .corrupt(path: path, reason: reason) }
        guard data.count >= headerSize + trailerSize else { throw corrupt("cut short: \(data.count) bytes") }
        guard data.prefix(8) == magic else { throw corrupt("not a segment") }
        let body = data.count - trailerSize
        guard data.suffix(4) == end, Int(data.littleEndianUInt64(at: body)) == body else {
            throw corrupt("cut short or extended: its trailer is missing")
        }
        guard CRC32.of(data.prefix(body)) == data.littleEndianUInt32(at: body + 8) else {
            throw corrupt("its checksum does not match its bytes")
        }
        guard data.littleEndianUInt32(at: 8) == format else { throw corrupt("an unknown format") }
        let pageSize = Int(data.littleEndianUInt32(at: 12))
        let count = Int(data.littleEndianUInt32(at: 36))
        guard headerSize + count * (4 + pageSize) == body else {
            throw corrupt("its page count disagrees with its size")
        }
        var pages: [(number: UInt32, bytes: Data)] = []
        pages.reserveCapacity(count)
        var offset = headerSize
        for _ in 0..<count {
            let number = data.littleEndianUInt32(at: offset)
            pages.append((number, data.subdata(in: offset + 4..<offset + 4 + pageSize)))
            offset += 4 + pageSize
        }
        return BackupSegment(
            pageSize: pageSize, index: Int(data.littleEndianUInt64(at: 16)),
            committedAt: Int64(bitPattern: data.littleEndianUInt64(at: 24)),
            framesRead: Int(data.littleEndianUInt32(at: 32)), pages: pages,
            databasePages: data.littleEndianUInt32(at: 40))
    }
}

extension Data {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    func littleEndianUInt32(at offset: Int) -> UInt32 {
        withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    }

    func littleEndianUInt64(at offset: Int) -> UInt64 {
        withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }
}
