import Testing

@testable import TableService

/// The protocol's rule for writes to an existing row, row by row, as both stores apply it.
@Suite struct WriteRuleTests {
    static let live = StoredItem(id: "a", createdAt: 1, updatedAt: 2, version: "v2", deleted: false, fields: [])
    static let deleted = StoredItem(id: "a", createdAt: 1, updatedAt: 3, version: "v3", deleted: true, fields: [])

    struct Case: Sendable, CustomTestStringConvertible {
        let request: WriteRule.Request
        let current: StoredItem?
        let before: String?
        let decision: WriteRule.Decision
        let testDescription: String
    }

    static let cases: [Case] = [
        Case(
            request: .update(VersionCheck()), current: nil, before: nil, decision: .refuse(.itemNotFound),
            testDescription: "an update of a missing row is a 404"),
        Case(
            request: .update(VersionCheck()), current: deleted, before: nil, decision: .refuse(.itemNotFound),
            testDescription: "an update of a soft-deleted row is a 404"),
        Case(
            request: .update(VersionCheck(ifMatch: "v1")), current: live, before: nil,
            decision: .refuse(.preconditionFailed(live)), testDescription: "a stale If-Match is a 412"),
        Case(
            request: .update(VersionCheck(bodyVersion: "v1")), current: live, before: nil,
            decision: .refuse(.conflict(live)), testDescription: "a stale body version is a 409"),
        Case(
            request: .update(VersionCheck(bodyVersion: "v1", bodyVersionStatus: 412)), current: live, before: nil,
            decision: .refuse(.preconditionFailed(live)),
            testDescription: "a stale body version in the legacy protocol is a 412"),
        Case(
            request: .update(VersionCheck(ifMatch: "v1")), current: live, before: "v1", decision: .write,
            testDescription: "the version before a schema backfill is accepted"),
        Case(
            request: .update(VersionCheck(ifMatch: "v2")), current: live, before: nil, decision: .write,
            testDescription: "the current version writes"),
        Case(
            request: .setDeleted(true, ifMatch: nil), current: deleted, before: nil, decision: .refuse(.itemNotFound),
            testDescription: "deleting a deleted row is a 404"),
        Case(
            request: .setDeleted(false, ifMatch: nil), current: live, before: nil, decision: .unchanged(live),
            testDescription: "bringing back a live row answers it unchanged"),
        Case(
            request: .setDeleted(false, ifMatch: "v1"), current: deleted, before: nil,
            decision: .refuse(.preconditionFailed(deleted)),
            testDescription: "bringing back with a stale If-Match is a 412"),
        Case(
            request: .setDeleted(true, ifMatch: "v2"), current: live, before: nil, decision: .write,
            testDescription: "deleting with the current version writes"),
        Case(
            request: .remove(ifMatch: "v0"), current: live, before: "v1", decision: .refuse(.preconditionFailed(live)),
            testDescription: "removing with neither version is a 412"),
        Case(
            request: .remove(ifMatch: nil), current: deleted, before: nil, decision: .write,
            testDescription: "removing a soft-deleted row writes"),
    ]

    @Test(arguments: cases) func decides(_ row: Case) {
        #expect(WriteRule.decide(row.request, current: row.current, versionBeforeBackfill: row.before) == row.decision)
    }

    @Test func theVersionBeforeABackfillIsReadOnlyWhenTheVersionsDiffer() {
        #expect(!WriteRule.needsVersionBeforeBackfill(.update(VersionCheck(ifMatch: "v2")), current: Self.live))
        #expect(WriteRule.needsVersionBeforeBackfill(.update(VersionCheck(bodyVersion: "v1")), current: Self.live))
        #expect(!WriteRule.needsVersionBeforeBackfill(.remove(ifMatch: "v1"), current: nil))
        #expect(!WriteRule.needsVersionBeforeBackfill(.setDeleted(true, ifMatch: nil), current: Self.live))
    }
}
