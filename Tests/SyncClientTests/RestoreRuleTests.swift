import Testing

@testable import SyncClient

/// After the service went back in time, each row is settled by its two copies and its queue.
struct RestoreRuleTests {
    typealias Copy = RestoreRule.Copy

    let synced = Copy(version: "v2", updatedAt: 2_000)
    let restored = Copy(version: "v1", updatedAt: 1_000)
    let newerThere = Copy(version: "v3", updatedAt: 3_000)

    @Test func aRowTheServiceLostIsAConflictGoneFromTheService() {
        #expect(RestoreRule.decide(local: synced, service: nil, queued: false) == .goneFromService)
    }

    @Test func olderValuesOnTheServiceAreAConflict() {
        #expect(RestoreRule.decide(local: synced, service: restored, queued: false) == .restoredOlder)
    }

    @Test func anOlderDeleteOnTheServiceIsARowGoneFromIt() {
        var deleted = restored
        deleted.deleted = true
        #expect(RestoreRule.decide(local: synced, service: deleted, queued: false) == .goneFromService)
    }

    @Test func whatTheServiceChangedSinceIsTakenAsAPullTakesIt() {
        #expect(RestoreRule.decide(local: synced, service: newerThere, queued: false) == .takeService)
        #expect(RestoreRule.decide(local: nil, service: newerThere, queued: false) == .takeService)
        var deleted = newerThere
        deleted.deleted = true
        #expect(RestoreRule.decide(local: synced, service: deleted, queued: false) == .takeService)
    }

    @Test func theSameCopyAndQueuedChangesAreLeftAlone() {
        #expect(RestoreRule.decide(local: synced, service: synced, queued: false) == .keep)
        #expect(RestoreRule.decide(local: synced, service: nil, queued: true) == .keep)
        #expect(RestoreRule.decide(local: synced, service: restored, queued: true) == .keep)
        #expect(RestoreRule.decide(local: nil, service: nil, queued: false) == .keep)
    }
}
