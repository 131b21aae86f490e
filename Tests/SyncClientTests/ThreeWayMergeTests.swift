import SyncProtocol
import Testing

@testable import SyncClient

/// The merge matrix: every way a field and an item can change on the two sides, with no store or network.
struct ThreeWayMergeTests {
    let columns = ["text", "complete"]
    let base: Item = ["id": "a", "version": "v1", "text": "milk", "complete": false]

    func server(_ changes: Item) -> Item {
        var item = base.merging(changes) { $1 }
        item["version"] = "v2"
        return item
    }

    func client(_ changes: Item) -> Item { base.merging(changes) { $1 } }

    func change(_ field: String, base: JSONValue?, client: JSONValue?, server: JSONValue?) -> FieldChange? {
        let fields = ThreeWayMerge.fields(
            base: base.map { ["x": $0] } ?? [:], client: client.map { ["x": $0] } ?? [:],
            server: server.map { ["x": $0] } ?? [:], columns: [field])
        return fields.first { $0.name == field }?.change
    }

    @Test(arguments: [
        // base, client, server → change
        (JSONValue.string("a"), JSONValue.string("a"), JSONValue.string("a"), FieldChange.unchanged),
        (.string("a"), .string("b"), .string("a"), .client),
        (.string("a"), .string("a"), .string("c"), .server),
        (.string("a"), .string("b"), .string("b"), .same),
        (.string("a"), .string("b"), .string("c"), .collision),
        (.bool(false), .number(1), .bool(true), .same),
        (.bool(false), .bool(false), .number(0), .unchanged),
        (.null, .string("b"), .null, .client),
        (.string("a"), .null, .string("a"), .client),
    ])
    func eachFieldIsClassifiedByWhichSidesChangedIt(
        base: JSONValue, client: JSONValue, server: JSONValue, expected: FieldChange
    ) {
        #expect(change("x", base: base, client: client, server: server) == expected)
    }

    @Test func aMissingFieldEqualsNull() {
        #expect(change("x", base: .null, client: nil, server: .null) == .unchanged)
    }

    @Test func textChangedHereAndCompleteChangedThereMergeWithoutAPrompt() {
        let outcome = ThreeWayMerge.merge(
            kind: .update, base: base, client: client(["text": "oat milk"]), server: server(["complete": true]),
            columns: columns)
        guard case .merged(let item) = outcome else {
            Issue.record("expected a merge, got \(outcome)")
            return
        }
        #expect(item["text"] == "oat milk")
        #expect(item["complete"] == .bool(true))
        #expect(item["version"] == "v2", "the merge is pushed with the server's version")
    }

    @Test func theSameFieldChangedToDifferentValuesPromptsWithAllThreeValues() {
        let outcome = ThreeWayMerge.merge(
            kind: .update, base: base, client: client(["text": "oat milk", "complete": true]),
            server: server(["text": "soy milk"]), columns: columns)
        guard case .collision(let fields) = outcome else {
            Issue.record("expected a collision, got \(outcome)")
            return
        }
        #expect(fields.map(\.name) == ["text"])
        #expect(fields[0].base == "milk" && fields[0].client == "oat milk" && fields[0].server == "soy milk")
        #expect(fields[0].merged == nil)
    }

    @Test func theSameFieldChangedToTheSameValueIsNoConflict() {
        let outcome = ThreeWayMerge.merge(
            kind: .update, base: base, client: client(["text": "oat milk"]), server: server(["text": "oat milk"]),
            columns: columns)
        #expect(outcome == .serverHasEverything)
    }

    @Test func sameValueOnOneFieldAndAOneSidedChangeOnAnotherMerge() {
        let outcome = ThreeWayMerge.merge(
            kind: .update, base: base, client: client(["text": "oat milk", "complete": true]),
            server: server(["text": "oat milk"]), columns: columns)
        #expect(outcome == .merged(server(["text": "oat milk", "complete": true])))
    }

    @Test func onlyTheServerChangedSomethingTakesTheServersItem() {
        let outcome = ThreeWayMerge.merge(
            kind: .update, base: base, client: base, server: server(["text": "soy milk"]), columns: columns)
        #expect(outcome == .serverHasEverything)
    }

    @Test func serverDeletedWhatWasEditedHere() {
        let outcome = ThreeWayMerge.merge(
            kind: .update, base: base, client: client(["text": "oat milk"]), server: nil, columns: columns)
        #expect(outcome == .serverDeletedClientEdited)
    }

    @Test func deletedHereWhatTheServerEdited() {
        let outcome = ThreeWayMerge.merge(
            kind: .delete, base: base, client: nil, server: server(["text": "soy milk"]), columns: columns)
        #expect(outcome == .clientDeletedServerEdited)
    }

    @Test func deletedHereWhileTheServerOnlyBumpedItsVersionLetsTheDeleteStand() {
        let outcome = ThreeWayMerge.merge(kind: .delete, base: base, client: nil, server: server([:]), columns: columns)
        #expect(outcome == .deleteStands)
    }

    @Test func deletedOnBothSidesLeavesNothingToDecide() {
        let outcome = ThreeWayMerge.merge(kind: .delete, base: base, client: nil, server: nil, columns: columns)
        #expect(outcome == .serverHasEverything)
    }

    @Test func anInsertMeeting409IsTwoWayWithoutABase() {
        let mine: Item = ["id": "a", "text": "milk", "complete": true]
        let theirs: Item = ["id": "a", "version": "v9", "text": "milk", "complete": false]
        let outcome = ThreeWayMerge.merge(kind: .insert, base: nil, client: mine, server: theirs, columns: columns)
        guard case .collision(let fields) = outcome else {
            Issue.record("expected a collision, got \(outcome)")
            return
        }
        #expect(fields.map(\.name) == ["complete"], "equal fields agree, different fields collide")
        #expect(fields[0].base == nil)
    }

    @Test func anInsertMatchingTheServersCopyIsNoConflict() {
        let mine: Item = ["id": "a", "text": "milk", "complete": false]
        let outcome = ThreeWayMerge.merge(kind: .insert, base: nil, client: mine, server: base, columns: columns)
        #expect(outcome == .serverHasEverything)
    }

    @Test func fieldsBeyondTheTablesColumnsAreComparedAndSystemColumnsAreNot() {
        let fields = ThreeWayMerge.fields(
            base: base, client: client(["note": "x"]), server: server([:]), columns: columns)
        #expect(fields.map(\.name) == ["text", "complete", "note"])
        #expect(fields.last?.change == .client)
    }

    @Test func aPickTakesEachCollidingFieldFromTheChosenSideAndMergesTheRest() throws {
        let fields = ThreeWayMerge.fields(
            base: base, client: client(["text": "oat milk", "complete": true]),
            server: server(["text": "soy milk", "complete": false]), columns: columns)
        let picked = try ThreeWayMerge.resolve(fields, server: server(["text": "soy milk"]), picks: ["text": .base])
        #expect(picked["text"] == "milk")
        #expect(picked["complete"] == .bool(true), "complete changed on the client only: it merges")
        #expect(picked["version"] == "v2")
    }

    @Test func aPickMustCoverEveryCollisionAndNameRealFields() {
        let fields = ThreeWayMerge.fields(
            base: base, client: client(["text": "oat milk"]), server: server(["text": "soy milk"]), columns: columns)
        #expect(throws: PickError.missingPick("text")) {
            try ThreeWayMerge.resolve(fields, server: server([:]), picks: [:])
        }
        #expect(throws: PickError.unknownField("colour", known: ["text", "complete"])) {
            try ThreeWayMerge.resolve(fields, server: server([:]), picks: ["text": .client, "colour": .server])
        }
    }

    @Test(arguments: ConflictPolicy.allCases)
    func eachPolicyDecidesEveryMergeOutcome(policy: ConflictPolicy) {
        let merged = MergeOutcome.merged(server(["text": "oat milk"]))
        let outcomes: [MergeOutcome] = [
            merged, .serverHasEverything, .deleteStands, .collision([]), .serverDeletedClientEdited,
            .clientDeletedServerEdited,
        ]
        let actions = outcomes.map(policy.action(for:))
        switch policy {
        case .ask: #expect(actions.allSatisfy { $0 == .ask })
        case .serverWins: #expect(actions.allSatisfy { $0 == .useServer })
        case .clientWins: #expect(actions.allSatisfy { $0 == .useClient })
        case .merge:
            #expect(
                actions == [
                    .pushMerged(server(["text": "oat milk"])), .useServer, .useClient, .ask, .ask, .ask,
                ])
        }
    }
}
