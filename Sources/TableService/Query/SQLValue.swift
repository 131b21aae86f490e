import SyncProtocol

/// A value bound to a statement's placeholder, the same for every database: the compiler and the
/// stores never write a value into SQL text.
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)
    case bool(Bool)

    /// How a JSON field value is stored: whole numbers below 2^53 as integers, other numbers as
    /// doubles; arrays and objects are refused before they get here and store as null.
    init(_ value: JSONValue) {
        switch value {
        case .null, .array, .object: self = .null
        case .bool(let bool): self = .bool(bool)
        case .string(let string): self = .text(string)
        case .number(let number):
            if number.rounded() == number, abs(number) < 9_007_199_254_740_992 {
                self = .integer(Int64(number))
            } else {
                self = .double(number)
            }
        }
    }

    /// The type of a value, without the value.
    enum Kind: Hashable, Sendable {
        case null, integer, double, text, bool
    }

    var kind: Kind {
        switch self {
        case .null: .null
        case .integer: .integer
        case .double: .double
        case .text: .text
        case .bool: .bool
        }
    }
}
