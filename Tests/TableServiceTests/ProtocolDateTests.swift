import SyncProtocol
import Testing

/// Timestamps are integer milliseconds on the inside and `2026-11-21T23:02:54.020Z` on the wire.
@Suite struct ProtocolDateTests {
    @Test func formatsWithMillisecondsInUTC() {
        #expect(ProtocolDate.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ProtocolDate.format(milliseconds: 1_795_302_174_020) == "2026-11-21T23:02:54.020Z")
        #expect(ProtocolDate.format(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(ProtocolDate.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }

    @Test func parsesWithOrWithoutMillisecondsAndOffsets() {
        let reference: Int64 = 1_795_302_174_020
        #expect(ProtocolDate.parse("2026-11-21T23:02:54.020Z") == reference)
        #expect(ProtocolDate.parse("2026-11-21T23:02:54.02Z") == reference)
        #expect(ProtocolDate.parse("2026-11-21T23:02:54.0209999Z") == reference)
        #expect(ProtocolDate.parse("2026-11-22T00:02:54.020+01:00") == reference)
        #expect(ProtocolDate.parse("2026-11-21T18:02:54.020-0500") == reference)
        #expect(ProtocolDate.parse("2026-11-21T23:02:54Z") == reference - 20)
        #expect(ProtocolDate.parse("2026-11-21T23:02Z") == reference - 54_020)
        #expect(ProtocolDate.parse("2026-11-21T23:02:54.020") == reference)
    }

    @Test func refusesMalformedDates() {
        for text in [
            "", "yesterday", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-21", "2026-11-21T24:00:00Z",
            "2026-11-21T23:02:54.Z", "2026-11-21T23:02:54.020ZZ", "2026-11-21T23:02:54+1",
        ] {
            #expect(ProtocolDate.parse(text) == nil, "\(text)")
        }
    }

    @Test func formattingAndParsingRoundTrip() {
        for milliseconds in stride(from: Int64(-86_400_000), to: 4_102_444_800_000, by: 9_876_543_211) {
            #expect(ProtocolDate.parse(ProtocolDate.format(milliseconds: milliseconds)) == milliseconds)
        }
    }
}
