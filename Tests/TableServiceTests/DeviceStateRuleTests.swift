import Testing

@testable import TableService

/// The one rule from a device's progress to its state, row by row (no store, no socket).
@Suite("Device state rule")
struct DeviceStateRuleTests {
    static let thresholds = FleetThresholds(
        behindAfterSeconds: 60, stalledAfterSeconds: 120, offlineAfterSeconds: 86_400)
    static let position = PullPosition(updatedAt: 1_000_000, id: "", skip: 0)

    static func progress(since: Int64, lastPull: Int64, answeredRows: Bool) -> DeviceRecord.TableProgress {
        var progress = DeviceRecord.TableProgress()
        progress.position = position
        progress.positionSince = since
        progress.lastPull = lastPull
        progress.answeredRows = answeredRows
        progress.rowsPastSince = answeredRows ? since : nil
        return progress
    }

    @Test("A device that keeps asking from one position with rows past it is stalled after the stall time, not before")
    func askingAgainFromOnePositionIsAStall() {
        let waiting = RowsWaiting(oldest: 1_000_500, count: 3, newest: 1_002_000)
        let before = DeviceStateRule.table(
            Self.progress(since: 2_000_000, lastPull: 2_119_999, answeredRows: true), waiting: waiting,
            now: 2_120_000, thresholds: Self.thresholds)
        #expect(before.state != .stalled)
        let after = DeviceStateRule.table(
            Self.progress(since: 2_000_000, lastPull: 2_120_000, answeredRows: true), waiting: waiting,
            now: 2_120_000, thresholds: Self.thresholds)
        #expect(after.state == .stalled)
        #expect(after.lagRows == 3)
    }

    @Test("A device at its head is healthy however long its position stays, and so is one that stopped asking")
    func aQuietDeviceIsNotStalled() {
        let atHead = DeviceStateRule.table(
            Self.progress(since: 0, lastPull: 10_000_000, answeredRows: false), waiting: nil, now: 10_000_000,
            thresholds: Self.thresholds)
        #expect(atHead == .init(state: .healthy, lagSeconds: 0, lagRows: 0))
        // Sent rows once, then silent: it has not kept asking.
        let silent = DeviceStateRule.table(
            Self.progress(since: 5_000_000, lastPull: 5_000_000, answeredRows: true),
            waiting: RowsWaiting(oldest: 4_990_000, count: 1, newest: 4_990_000), now: 5_030_000,
            thresholds: Self.thresholds)
        #expect(silent.state == .healthy)
    }

    @Test("An advancing device is behind when the oldest row it lacks waited past the behind time")
    func lagPastTheBehindTimeIsBehind() {
        let progress = Self.progress(since: 3_000_000, lastPull: 3_000_000, answeredRows: true)
        let within = DeviceStateRule.table(
            progress, waiting: RowsWaiting(oldest: 2_950_000, count: 2, newest: 2_990_000), now: 3_000_000,
            thresholds: Self.thresholds)
        #expect(within.state == .healthy && within.lagSeconds == 50)
        let past = DeviceStateRule.table(
            progress, waiting: RowsWaiting(oldest: 2_930_000, count: 2, newest: 2_990_000), now: 3_000_000,
            thresholds: Self.thresholds)
        #expect(past.state == .behind && past.lagSeconds == 70)
    }

    @Test("A device is offline after no contact for the offline time, whatever its tables; else its worst table")
    func theDeviceTakesItsWorstTableOrOffline() {
        var record = DeviceRecord(id: "d", lastContact: 0)
        #expect(
            DeviceStateRule.device(record, tables: [.stalled], now: 86_400_000, thresholds: Self.thresholds) == .offline
        )
        #expect(
            DeviceStateRule.device(record, tables: [.healthy, .behind, .stalled], now: 1, thresholds: Self.thresholds)
                == .stalled)
        #expect(DeviceStateRule.device(record, tables: [.healthy], now: 1, thresholds: Self.thresholds) == .healthy)
        record.oldNames["todo.text"] = 0
        #expect(DeviceStateRule.device(record, tables: [.healthy], now: 1, thresholds: Self.thresholds) == .oldShape)
        #expect(DeviceStateRule.device(record, tables: [.behind], now: 1, thresholds: Self.thresholds) == .behind)
    }

    @Test("Where the missing rows start: past the position when the pull there had rows, else past the pull")
    func waitingStartsPastThePositionOrThePull() {
        #expect(
            DeviceStateRule.waitingFrom(Self.progress(since: 0, lastPull: 2_000_000, answeredRows: true)) == 1_000_000)
        #expect(
            DeviceStateRule.waitingFrom(Self.progress(since: 0, lastPull: 2_000_000, answeredRows: false)) == 2_000_000)
        #expect(DeviceStateRule.waitingFrom(DeviceRecord.TableProgress()) == nil)
    }

    @Test(
        "A device long at the head of a quiet table is not stalled by the first row that comes; by pulls from it after the stall time it is"
    )
    func theStallCountsFromTheFirstAnswerWithRows() {
        var progress = DeviceRecord.TableProgress()
        progress.pulled(from: Self.position, at: 0, rows: 0)
        progress.pulled(from: Self.position, at: 500_000, rows: 0)
        progress.pulled(from: Self.position, at: 600_000, rows: 1)
        let waiting = RowsWaiting(oldest: 599_000, count: 1, newest: 599_000)
        #expect(
            DeviceStateRule.table(progress, waiting: waiting, now: 600_000, thresholds: Self.thresholds).state
                == .healthy)
        progress.pulled(from: Self.position, at: 720_000, rows: 1)
        #expect(
            DeviceStateRule.table(progress, waiting: waiting, now: 720_000, thresholds: Self.thresholds).state
                == .stalled)
        progress.pulled(from: PullPosition(updatedAt: 599_000, id: "", skip: 0), at: 730_000, rows: 0)
        #expect(
            DeviceStateRule.table(progress, waiting: nil, now: 730_000, thresholds: Self.thresholds).state == .healthy)
    }

    @Test("Two instances' views of one table merge: the later pull, the earlier time the same position was first seen")
    func progressMerges() {
        let a = Self.progress(since: 100, lastPull: 500, answeredRows: true)
        var b = Self.progress(since: 200, lastPull: 900, answeredRows: false)
        b.lastPush = 50
        b.lastPushStatus = 201
        let merged = a.merged(b)
        #expect(merged.lastPull == 900 && merged.positionSince == 100 && merged.lastPushStatus == 201)
    }
}

/// Where a pull asks from, read from its filter.
@Suite("Pull position")
struct PullPositionTests {
    static func position(_ filter: String, skip: Int = 0) throws -> (PullPosition?, Bool) {
        let expression = try FilterParser.parse(filter)
        return (PullPosition(filter: expression, skip: skip), PullPosition.isInclusive(expression))
    }

    @Test("v2's updatedAt ge is an inclusive position; $skip is part of it")
    func officialClientsBound() throws {
        let (position, inclusive) = try Self.position(
            "(updatedAt ge datetimeoffset'2026-01-01T00:00:00.000Z')", skip: 50)
        #expect(position == PullPosition(updatedAt: 1_767_225_600_000, id: "", skip: 50))
        #expect(inclusive)
    }

    @Test("todosync's keyset cursor is the position (T, id), exclusive")
    func keysetCursor() throws {
        let (position, inclusive) = try Self.position(
            "((updatedAt gt datetimeoffset'2026-01-01T00:00:00.000Z') or (updatedAt eq datetimeoffset'2026-01-01T00:00:00.000Z' and id gt 'b'))"
        )
        #expect(position == PullPosition(updatedAt: 1_767_225_600_000, id: "b", skip: 0))
        #expect(!inclusive)
    }

    @Test("A user's filter beside the bound keeps the bound; a filter without one is a read, not a pull")
    func otherFilters() throws {
        let (bounded, _) = try Self.position(
            "complete eq false and updatedAt gt cast(2026-01-01T00:00:00.000Z,Edm.DateTimeOffset)")
        #expect(bounded?.updatedAt == 1_767_225_600_000)
        #expect(try Self.position("complete eq false").0 == nil)
        #expect(
            try Self.position("(updatedAt gt datetimeoffset'2026-01-01T00:00:00.000Z') or complete eq false").0 == nil)
    }
}

/// What a todosync client says of itself, read strictly.
@Suite("Client state header")
struct ClientStateTests {
    @Test("Whole numbers for queue, oldest and conflicts are read; anything else is refused")
    func readsOnlyWhatItKnows() throws {
        #expect(
            try ClientState(parsing: "queue=3, oldest=120, conflicts=1")
                == ClientState(queue: 3, oldest: 120, conflicts: 1))
        #expect(try ClientState(parsing: "queue=0") == ClientState(queue: 0, oldest: 0, conflicts: 0))
        for bad in ["queue=-1", "queue=1e3", "queue=3, queue=4", "battery=5", "queue=99999999999", "queue", ""] {
            #expect(throws: TableError.self, "\(bad)") { try ClientState(parsing: bad) }
        }
    }
}
