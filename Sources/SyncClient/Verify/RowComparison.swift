import Foundation
import SyncProtocol

/// How one row compares between the local table and the service: a pure function from both copies,
/// the row's queued change and the table's pull token to a difference (or none).
enum RowComparison {
    /// What verify reads of a copy: enough to tell two copies apart.
    struct Copy: Sendable, Hashable {
        var version: String?
        var updatedAt: String?
        var deleted = false
        /// The row's values (nil: not read, such as a local row the service lacks); its system
        /// columns, if there, are left out of the comparison.
        var values: [String: JSONValue]?
        /// A hash of ``values`` as ``contentHash(_:)`` computes it: two copies with equal hashes
        /// hold the same values, so only copies whose hashes differ are compared column by column.
        var content: Int?

        init(
            version: String? = nil, updatedAt: String? = nil, deleted: Bool = false, values: [String: JSONValue]? = nil
        ) {
            self.version = version
            self.updatedAt = updatedAt
            self.deleted = deleted
            self.values = values
            content = values.map(RowComparison.contentHash)
        }
    }

    /// The difference between `local` and `service` copies of row `id` (nil: none, or neither has
    /// it), with its reason: the queued change of the row (`queued`, conflict first), else whether
    /// the service's copy is past `pulledUpTo` (the table's furthest delta token; nil: never pulled
    /// incrementally, so everything on the service is "not pulled yet").
    static func difference(
        id: String, local: Copy?, service: Copy?, queued: OperationState?, pulledUpTo: DeltaToken?
    ) -> RowDifference? {
        let kind: RowDifference.Kind
        var columns: [String] = []
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
            if local.version == service.version, sameInstant(local.updatedAt, service.updatedAt) {
                guard let mine = local.values, let theirs = service.values, local.content != service.content else {
                    return nil
                }
                columns = differingColumns(mine, theirs)
                guard !columns.isEmpty else { return nil }
                kind = .differentValues
            } else {
                kind = .differentVersion
            }
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
            serviceVersion: service?.version, serviceUpdatedAt: service?.updatedAt, columns: columns)
    }

    /// A hash of a row's user columns that two equal copies share whatever the order of their
    /// members, a missing member and null hashing alike (a page leaves out what a row lacks).
    static func contentHash(_ values: [String: JSONValue]) -> Int {
        var combined = 0
        for (name, value) in values where value != .null && !SystemColumn.all.contains(name) {
            var hasher = Hasher()
            hasher.combine(name)
            hasher.combine(canonical(value))
            // Order-free: the members' hashes are added.
            combined = combined &+ hasher.finalize()
        }
        return combined
    }

    /// The columns whose values differ, a missing member counting as null; dates compared as instants.
    static func differingColumns(_ local: [String: JSONValue], _ service: [String: JSONValue]) -> [String] {
        Set(local.keys).union(service.keys).filter { name in
            !SystemColumn.all.contains(name) && canonical(local[name] ?? .null) != canonical(service[name] ?? .null)
        }.sorted()
    }

    /// A value as it compares: a date-time text as its instant (precision and zone vary by service).
    private static func canonical(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value, text.utf8.count >= 20,
            text.utf8[text.utf8.index(text.utf8.startIndex, offsetBy: 10)] == UInt8(ascii: "T"),
            let milliseconds = ProtocolDate.parse(text)
        else { return value }
        return .string(ProtocolDate.format(milliseconds: milliseconds))
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
