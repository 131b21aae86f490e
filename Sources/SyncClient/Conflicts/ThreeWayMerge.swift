import SyncProtocol

/// Which copy of an item a value comes from.
public enum ConflictSide: String, Sendable, Hashable, Codable, CaseIterable {
    /// The last server copy the local change started from.
    case base
    /// The local copy.
    case client
    /// The server's current copy.
    case server
}

/// How one field compares across base, client and server.
public enum FieldChange: String, Sendable, Hashable, Codable {
    /// Client and server hold the same value, and neither changed it since the base.
    case unchanged
    /// Only the client changed it: the client's value merges.
    case client
    /// Only the server changed it: the server's value stays.
    case server
    /// Both changed it to the same value: no conflict.
    case same
    /// Both changed it to different values (or, with no base, the two values differ): a person decides.
    case collision
}

/// One field of a three-way comparison.
public struct FieldMerge: Sendable, Hashable, Codable {
    /// The column.
    public var name: String
    /// Its value in the base (nil when there is no base, as for an insert that met an existing id).
    public var base: JSONValue?
    /// Its local value.
    public var client: JSONValue?
    /// Its value on the server.
    public var server: JSONValue?
    /// How the two changes relate.
    public var change: FieldChange

    /// The value a merge keeps; nil for a collision, which needs a person.
    public var merged: JSONValue? {
        switch change {
        case .client: client ?? .null
        case .unchanged, .server, .same: server ?? .null
        case .collision: nil
        }
    }

    /// The value on one side (null when that side lacks the field).
    public func value(_ side: ConflictSide) -> JSONValue {
        switch side {
        case .base: base ?? .null
        case .client: client ?? .null
        case .server: server ?? .null
        }
    }
}

/// What a three-way comparison of a conflict concluded.
public enum MergeOutcome: Sendable, Hashable {
    /// No field collides and the client changed something the server lacks: push this item (the
    /// server's item with the client's one-sided changes) with the server's version.
    case merged(Item)
    /// The server already holds every local change (or the client changed nothing): take its item.
    case serverHasEverything
    /// The local delete meets a server copy whose user fields equal the base: the delete goes on.
    case deleteStands
    /// Fields changed on both sides to different values: a person decides.
    case collision([FieldMerge])
    /// The server deleted the item that was edited here.
    case serverDeletedClientEdited
    /// The item was deleted here and edited on the server.
    case clientDeletedServerEdited
}

/// The three-way merge of a conflict: base (the last server copy the local change started from),
/// client and server, compared field by field. Pure: no store, no network.
public enum ThreeWayMerge {
    /// Compares the three copies of one item.
    ///
    /// - Parameters:
    ///   - kind: the local operation (a delete has no client copy).
    ///   - base: the last server copy the change started from; nil for an insert (then the
    ///     comparison is two-way: equal fields agree, different fields collide).
    ///   - client: the local copy; nil for a delete.
    ///   - server: the server's copy; nil when the server deleted the item.
    ///   - columns: the table's user columns (fields any copy has beyond them are compared too).
    public static func merge(
        kind: OperationKind, base: Item?, client: Item?, server: Item?, columns: [String]
    ) -> MergeOutcome {
        guard let server else {
            // Both sides deleted it: nothing is left to decide.
            return kind == .delete || client == nil ? .serverHasEverything : .serverDeletedClientEdited
        }
        guard kind != .delete, let client else {
            guard let base else { return .clientDeletedServerEdited }
            let edited = fields(base: base, client: base, server: server, columns: columns)
                .contains { $0.change != .unchanged }
            return edited ? .clientDeletedServerEdited : .deleteStands
        }
        let compared = fields(base: base, client: client, server: server, columns: columns)
        let collisions = compared.filter { $0.change == .collision }
        if !collisions.isEmpty { return .collision(collisions) }
        let clientOnly = compared.filter { $0.change == .client }
        if clientOnly.isEmpty { return .serverHasEverything }
        var item = server
        for field in clientOnly { item[field.name] = field.client ?? .null }
        return .merged(item)
    }

    /// Every user field of the three copies with how its two changes relate, in the table's order
    /// (`columns` first, then other fields by name). System columns are not compared.
    public static func fields(base: Item?, client: Item?, server: Item?, columns: [String]) -> [FieldMerge] {
        var names = columns.filter { !SystemColumn.all.contains($0) }
        var extra: Set<String> = []
        for item in [client, server, base] {
            for key in (item ?? [:]).keys where !SystemColumn.all.contains(key) && !names.contains(key) {
                extra.insert(key)
            }
        }
        names += extra.sorted()
        return names.map { name in
            let (b, c, s) = (base?[name], client?[name], server?[name])
            let change: FieldChange
            if base == nil {
                change = same(c, s) ? .same : .collision
            } else {
                switch (same(b, c), same(b, s)) {
                case (true, true): change = .unchanged
                case (false, true): change = .client
                case (true, false): change = .server
                case (false, false): change = same(c, s) ? .same : .collision
                }
            }
            return FieldMerge(name: name, base: b, client: c, server: s, change: change)
        }
    }

    /// The item a person's per-field choice gives: the server's item (for its system columns), every
    /// field merged as ``FieldMerge/merged``, and the picked side for the fields in `picks`.
    ///
    /// - Throws: ``PickError`` when a colliding field has no pick, or a pick names no field.
    public static func resolve(
        _ fields: [FieldMerge], server: Item, picks: [String: ConflictSide]
    ) throws(PickError) -> Item {
        let names = Set(fields.map(\.name))
        if let unknown = picks.keys.sorted().first(where: { !names.contains($0) }) {
            throw .unknownField(unknown, known: fields.map(\.name))
        }
        var item = server
        for field in fields {
            if let side = picks[field.name] {
                item[field.name] = field.value(side)
            } else if let merged = field.merged {
                item[field.name] = merged
            } else {
                throw .missingPick(field.name)
            }
        }
        return item
    }

    /// Whether two field values are the same: a missing field equals null, and a boolean equals the
    /// number SQLite stores it as (true = 1).
    public static func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        let (x, y) = (a ?? .null, b ?? .null)
        if x == y { return true }
        switch (x, y) {
        case (.bool(let flag), .number(let number)), (.number(let number), .bool(let flag)):
            return (number != 0) == flag && (number == 0 || number == 1)
        default:
            return false
        }
    }
}

/// Why a per-field choice cannot be applied.
public enum PickError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A field changed on both sides has no choice.
    case missingPick(String)
    /// A choice names a field the item does not have.
    case unknownField(String, known: [String])

    /// What happened and what the user can do.
    public var description: String {
        switch self {
        case .missingPick(let name):
            "The field '\(name)' was changed on both sides: choose client, server or base for it."
        case .unknownField(let name, let known):
            "The item has no field '\(name)'; its fields are \(known.joined(separator: ", "))."
        }
    }
}
