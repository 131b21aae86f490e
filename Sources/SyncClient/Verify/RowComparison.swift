import Foundation

/// How one row compares between the local table and the service: a pure function from both copies,
/// the row's queued change and the table's pull token to a difference (or none).
enum RowComparison {
    /// What verify reads of a copy: enough to tell two copies apart.
    struct Copy: Sendable, Hashable {
        var version: String?
        var updatedAt: String?
        var deleted = false
    }

    /// The difference between `local` and `service` copies of row `id` (nil: none, or neither has
    /// it), with its reason: the queued change of the row (`queued`, conflict first), else whether
    /// the service's copy is past `pulledUpTo` (the table's furthest delta token; nil: never pulled
    /// incrementally, so everything on the service is "not pulled yet").
    static func difference(
        id: String, local: Copy?, service: Copy?, queued: OperationState?, pulledUpTo: DeltaToken?
    ) -> RowDifference? {
        let kind: RowDifference.Kind
        switch (local, service) {
        case (nil, nil):
            return nil
        case (nil, .some(let service)):
            guard !service.deleted else { return nil }
            kind = .missingLocally
        case (.some, nil):
            kind = .missingOnService
        case (.some, .some(let service)) where service.deleted:
            kind = .deletedOnService
        case (.some(let local), .some(let service)):
            guard local.version != service.version || !sameInstant(local.updatedAt, service.updatedAt) else {
                return nil
            }
            kind = .differentVersion
        }
        let reason: RowDifference.Reason
        if queued == .conflict {
            reason = .conflict
        } else if queued != nil {
            reason = .pendingChange
        } else if let updatedAt = service?.updatedAt,
            pulledUpTo.map({ $0.isBefore(updatedAt: updatedAt, id: id) }) ?? true
        {
            reason = .notPulledYet
        } else {
            reason = .none
        }
        return RowDifference(
            id: id, kind: kind, reason: reason, localVersion: local?.version, localUpdatedAt: local?.updatedAt,
            serviceVersion: service?.version, serviceUpdatedAt: service?.updatedAt)
    }

    /// Whether two `updatedAt` values are the same instant (text may differ in precision or zone).
    static func sameInstant(_ left: String?, _ right: String?) -> Bool {
        guard let left, let right else { return left == right }
        return DeltaToken.compare(left, right) == .orderedSame
    }

    /// The furthest of `tokens` (nil when none has a cursor).
    static func furthest(_ tokens: [DeltaToken]) -> DeltaToken? {
        tokens.filter { $0.updatedAt != nil }.max { earlier, later in
            earlier.isBefore(updatedAt: later.updatedAt!, id: later.id ?? "")
        }
    }
}
