/// Makes `$filter` texts for fuzzing: well-formed ones from a small OData grammar (known and
/// unknown fields, every operator and function, odd literals), then mutated byte by byte, plus a
/// few very large or deeply nested ones. The same seed gives the same texts.
struct HostileFilterGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    static let fields = [
        "text", "complete", "id", "version", "createdAt", "updatedAt", "deleted", "nosuch", "TEXT", "__version",
        "text/length", "a b", "sqlite_master", "rowid",
    ]
    static let literals = [
        "'milk'", "'it''s'", "''", "'", "'%'", "'_'", "'\\'", "'é𝄞'", "'\u{0}'", "'; DROP TABLE todoitem; --'",
        "5", "-1.5", "1e308", "1e999", "-0", "0x10", "9223372036854775808", "true", "false", "null", "NaN",
        "datetimeoffset'2026-01-01T00:00:00.000Z'", "datetimeoffset'2026-01-01T00:00:00+02:00'",
        "datetimeoffset'garbage'", "datetime'2026-01-01'", "guid'0000'", "X'00'",
    ]
    static let comparisons = ["eq", "ne", "gt", "ge", "lt", "le", "=", "like", "has", "in"]
    static let junk = Array("()'\" \\%,;.-/*+\u{0}\u{7f}\u{1}é𝄞$&=?#ä\n\t")

    private mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    private mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// The `index`th text of the sequence: mostly grammar-made, half of those mutated, a few huge.
    mutating func filter(_ index: Int) -> String {
        switch below(100) {
        case 0: return huge()
        case 1..<45: return expression(depth: 0)
        default: return mutate(expression(depth: 0))
        }
    }

    private mutating func expression(depth: Int) -> String {
        let roll = depth > 4 ? below(4) : below(9)
        switch roll {
        case 0, 1: return "\(pick(Self.fields)) \(pick(Self.comparisons)) \(pick(Self.literals))"
        case 2: return "\(pick(Self.literals)) \(pick(Self.comparisons)) \(pick(Self.fields))"
        case 3:
            let function = pick([
                "startswith", "endswith", "substringof", "contains", "tolower", "length", "year", "nosuchfunction",
            ])
            let arguments =
                below(2) == 0
                ? "\(pick(Self.fields)), \(pick(Self.literals))" : "\(pick(Self.literals)), \(pick(Self.fields))"
            return below(3) == 0 ? "\(function)(\(arguments)) eq \(pick(Self.literals))" : "\(function)(\(arguments))"
        case 4: return "not \(expression(depth: depth + 1))"
        case 5: return "(\(expression(depth: depth + 1)))"
        case 6: return "\(expression(depth: depth + 1)) and \(expression(depth: depth + 1))"
        case 7: return "\(expression(depth: depth + 1)) or \(expression(depth: depth + 1))"
        default: return pick(Self.fields)
        }
    }

    private mutating func mutate(_ text: String) -> String {
        var characters = Array(text)
        for _ in 0..<(1 + below(4)) {
            let position = characters.isEmpty ? 0 : below(characters.count)
            switch below(6) {
            case 0 where !characters.isEmpty: characters.remove(at: position)
            case 1: characters.insert(pick(Self.junk), at: position)
            case 2 where !characters.isEmpty: characters[position] = pick(Self.junk)
            case 3 where characters.count > 2:
                let end = min(characters.count, position + 1 + below(10))
                characters.insert(contentsOf: characters[position..<end], at: position)
            case 4: characters = Array(characters.prefix(position))
            default: characters.insert(contentsOf: Array(" \(pick(Self.comparisons)) "), at: position)
            }
        }
        return String(characters)
    }

    /// Long chains and deep nesting: a parser's recursion and SQLite's expression limits.
    private mutating func huge() -> String {
        switch below(5) {
        case 0: return Array(repeating: "text eq 'a'", count: 1500).joined(separator: " or ")
        case 1: return String(repeating: "(", count: 3000) + "text eq 'a'" + String(repeating: ")", count: 3000)
        case 2: return String(repeating: "not ", count: 3000) + "complete"
        case 3: return Array(repeating: "startswith(text, 'a')", count: 300 + below(900)).joined(separator: " and ")
        default: return "text eq '" + String(repeating: "x", count: 6000) + "'"
        }
    }
}
