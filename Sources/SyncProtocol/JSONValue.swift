/// Any JSON value: the items of the table protocol have a dynamic schema.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            // Whole numbers are written without a fraction (2, not 2.0), as JavaScript servers do.
            if value.rounded() == value, abs(value) < 9_007_199_254_740_992 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }
    public var numberValue: Double? {
        if case .number(let value) = self { value } else { nil }
    }
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }
    public var isNull: Bool { self == .null }

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value.rounded() == value && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
        case .string(let value): value
        case .array(let value): "[\(value.map(\.description).joined(separator: ", "))]"
        case .object(let value): "{\(value.keys.sorted().map { "\($0): \(value[$0]!)" }.joined(separator: ", "))}"
        }
    }
}

/// One table row as JSON: field name → value.
public typealias Item = [String: JSONValue]
