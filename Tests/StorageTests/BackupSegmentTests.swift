import Foundation
import Testing

@testable import Storage

/// The backup's file formats: the checksum, and a segment read back whole or refused.
@Suite("Backup segments")
struct BackupSegmentTests {
    @Test func theChecksumIsZlibsCRC32() {
        #expect(CRC32.of(Data("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.of(Data()) == 0)
        // Eight bytes a step and the rest one by one, split anywhere: the same checksum.
        let text = Data("The quick brown fox jumps over the lazy dog".utf8)
        #expect(CRC32.of(text) == 0x414F_A339)
        var split = CRC32()
        split.update(text.prefix(13))
        split.update(text.dropFirst(13))
        #expect(split.value == 0x414F_A339)
    }

    @Test func aSegmentKeepsEachPagesLatestVersionAndTheSizeAfterItsLastCommit() throws {
        let frames = [
            WALFrame(pageNumber: 2, databasePages: 0, page: Data(repeating: 1, count: 512)),
            WALFrame(pageNumber: 3, databasePages: 3, page: Data(repeating: 2, count: 512)),
            WALFrame(pageNumber: 2, databasePages: 4, page: Data(repeating: 3, count: 512)),
        ]
        let segment = BackupSegment(index: 7, committedAt: 1234, pageSize: 512, frames: frames)
        let decoded = try BackupSegment.decode(segment.encoded(), path: "s")
        #expect(decoded.index == 7 && decoded.committedAt == 1234 && decoded.framesRead == 3)
        #expect(decoded.databasePages == 4)
        #expect(decoded.pages.map(\.number) == [2, 3])
        #expect(decoded.pages[0].bytes == Data(repeating: 3, count: 512))
    }

    @Test func aSegmentCutShortOrChangedIsRefused() {
        let encoded = BackupSegment(
            index: 1, committedAt: 1, pageSize: 512,
            frames: [WALFrame(pageNumber: 1, databasePages: 1, page: Data(repeating: 9, count: 512))]
        ).encoded()
        var changed = encoded
        changed[100] ^= 1
        for bytes in [encoded.prefix(encoded.count - 1), changed, Data()] {
            #expect(throws: BackupError.self) { try BackupSegment.decode(Data(bytes), path: "s") }
        }
    }
}
