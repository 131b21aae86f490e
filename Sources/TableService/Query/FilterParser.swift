import SyncProtocol

/// Parses an OData `$filter` (v3, and the v4 forms Datasync clients send) into a ``FilterExpression``.
///
/// Grammar (lowest precedence first): `or`, `and`, `not`, comparisons (`eq ne gt ge lt le`) and
/// `in (…)`, `add sub`, `mul div mod`, then primaries: parentheses, literals (`'text'` with `''` for
/// a quote, numbers, `true`, `false`, `null`, `datetimeoffset'…'`, `datetime'…'`, `guid'…'`, and
/// bare dates, times and date-times, also inside `cast(…,Edm.Date)`), property names and function calls. Errors carry
/// the position (0-based, in characters of the decoded filter) where the text stopped making sense.
struct FilterParser {
    /// Deepest nesting of parentheses and `not` accepted (a bound so that hostile input cannot
    /// exhaust the stack).
    static let maximumDepth = 64

    private enum Token: Equatable {
        case name(String)
        case string(String)
        case typed(type: String, value: String)
        case number(String)
        /// A bare date, time of day or date-time (`2026-01-31`, `14:30:00`, `2026-01-31T12:00:00Z`).
        case temporal(FilterLiteral)
        case open, close, comma
        case end
    }

    private let text: [Character]
    private var index = 0
    private var token: Token = .end
    private var tokenStart = 0
    private var depth = 0

    private init(_ text: String) {
        self.text = Array(text)
    }

    /// The expression for `filter`, or a ``TableError/invalidQuery(_:)`` saying what is wrong and where.
    static func parse(_ filter: String) throws(TableError) -> FilterExpression {
        var parser = FilterParser(filter)
        try parser.advance()
        if parser.token == .end { throw parser.failure("the filter is empty; give a condition such as text eq 'milk'") }
        let expression = try parser.parseOr()
        guard parser.token == .end else {
            throw parser.failure("expected 'and', 'or' or the end of the filter after a complete condition")
        }
        return expression
    }

    // MARK: Grammar

    private mutating func parseOr() throws(TableError) -> FilterExpression {
        var left = try parseAnd()
        while isKeyword("or") {
            try advance()
            left = .or(left, try parseAnd())
        }
        return left
    }

    private mutating func parseAnd() throws(TableError) -> FilterExpression {
        var left = try parseNot()
        while isKeyword("and") {
            try advance()
            left = .and(left, try parseNot())
        }
        return left
    }

    private mutating func parseNot() throws(TableError) -> FilterExpression {
        if isKeyword("not") {
            try enter()
            try advance()
            let operand = try parseNot()
            depth -= 1
            return .not(operand)
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws(TableError) -> FilterExpression {
        let left = try parseAdditive()
        if case .name(let word) = token, let op = ComparisonOperator(rawValue: word.lowercased()) {
            try advance()
            return .comparison(op, left, try parseAdditive())
        }
        if isKeyword("in") {
            try advance()
            guard token == .open else { throw failure("expected '(' and a list of values after 'in'") }
            try enter()
            try advance()
            var values = [try parseAdditive()]
            while token == .comma {
                try advance()
                values.append(try parseAdditive())
            }
            guard token == .close else { throw failure("expected ',' or ')' in the list after 'in'") }
            depth -= 1
            try advance()
            return .isIn(left, values)
        }
        if case .name(let word) = token, !["and", "or"].contains(word.lowercased()) {
            throw failure(
                "'\(word)' is not an operator; use eq, ne, gt, ge, lt, le, and, or (or close a parenthesis)")
        }
        if token != .end, token != .close, token != .comma, !isKeyword("and"), !isKeyword("or") {
            throw failure("expected an operator (eq, ne, gt, ge, lt, le, and, or) or ')'")
        }
        return left
    }

    private mutating func parseAdditive() throws(TableError) -> FilterExpression {
        var left = try parseMultiplicative()
        while let op = arithmeticKeyword(), op == .add || op == .sub {
            try advance()
            left = .arithmetic(op, left, try parseMultiplicative())
        }
        return left
    }

    private mutating func parseMultiplicative() throws(TableError) -> FilterExpression {
        var left = try parsePrimary()
        while let op = arithmeticKeyword(), op != .add, op != .sub {
            try advance()
            left = .arithmetic(op, left, try parsePrimary())
        }
        return left
    }

    private func arithmeticKeyword() -> ArithmeticOperator? {
        guard case .name(let word) = token else { return nil }
        return ArithmeticOperator(rawValue: word.lowercased())
    }

    /// `cast(literal, Edm.Type)`, after its name: the literal, checked to be of that type.
    private mutating func parseCast(at start: Int) throws(TableError) -> FilterExpression {
        try enter()
        try advance()
        let value = try parseAdditive()
        guard token == .comma else { throw failure("expected ',' and a type such as Edm.Date in cast") }
        try advance()
        guard case .name(let type) = token else { throw failure("expected a type such as Edm.Date in cast") }
        try advance()
        guard token == .close else { throw failure("expected ')' to close cast") }
        depth -= 1
        try advance()
        switch (type.lowercased(), value) {
        case ("edm.date", .literal(.dateOnly)), ("edm.timeofday", .literal(.timeOfDay)),
            ("edm.datetimeoffset", .literal(.date)):
            return value
        case ("edm.datetimeoffset", .literal(.dateOnly(let date))):
            return .literal(.date(ProtocolDate.parse(date + "T00:00:00Z") ?? 0))
        default:
            throw TableError.invalidQuery(
                "The $filter casts a value to \(type) at position \(start), which this service cannot do; it casts "
                    + "dates to Edm.Date, times to Edm.TimeOfDay and date-times to Edm.DateTimeOffset.")
        }
    }

    private mutating func parsePrimary() throws(TableError) -> FilterExpression {
        let start = tokenStart
        switch token {
        case .open:
            try enter()
            try advance()
            let inner = try parseOr()
            guard token == .close else {
                throw failure("expected ')' to close the parenthesis opened at position \(start)")
            }
            depth -= 1
            try advance()
            return inner
        case .string(let value):
            try advance()
            return .literal(.string(value))
        case .number(let digits):
            try advance()
            return .literal(try number(digits, at: start))
        case .typed(let type, let value):
            try advance()
            return .literal(try typedLiteral(type, value, at: start))
        case .temporal(let literal):
            try advance()
            return .literal(literal)
        case .name(let word):
            try advance()
            switch word {
            case "null": return .literal(.null)
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            default: break
            }
            if token == .open, word.lowercased() == "cast" {
                return try parseCast(at: start)
            }
            if token == .open {
                guard let function = FilterFunction(rawValue: word.lowercased()) else {
                    throw TableError.invalidQuery(
                        "The $filter calls an unknown function '\(word)' at position \(start); the functions are "
                            + FilterFunction.allCases.map(\.rawValue).joined(separator: ", ") + ".")
                }
                try enter()
                try advance()
                var arguments: [FilterExpression] = []
                if token != .close {
                    arguments.append(try parseOr())
                    while token == .comma {
                        try advance()
                        arguments.append(try parseOr())
                    }
                }
                guard token == .close else { throw failure("expected ',' or ')' in the arguments of \(word)") }
                depth -= 1
                try advance()
                guard arguments.count == function.arity else {
                    throw TableError.invalidQuery(
                        "The $filter calls \(function.rawValue) at position \(start) with \(arguments.count) "
                            + "argument(s); it takes \(function.arity).")
                }
                return .call(function, arguments, position: start)
            }
            if ComparisonOperator(rawValue: word.lowercased()) != nil
                || ArithmeticOperator(rawValue: word.lowercased()) != nil
                || ["and", "or", "not", "in"].contains(word.lowercased())
            {
                throw TableError.invalidQuery(
                    "The $filter has the operator '\(word)' at position \(start) where a value or property name was expected."
                )
            }
            return .member(word, position: start)
        case .close:
            throw failure("expected a value or property name, found ')'")
        case .comma:
            throw failure("expected a value or property name, found ','")
        case .end:
            throw failure("the filter ends where a value or property name was expected")
        }
    }

    // MARK: Literals

    private func number(_ digits: String, at position: Int) throws(TableError) -> FilterLiteral {
        var body = digits
        if let last = body.last, "lLmMdDfF".contains(last) { body.removeLast() }
        if !body.contains(where: { ".eE".contains($0) }), let value = Int64(body) { return .integer(value) }
        if let value = Double(body), value.isFinite { return .double(value) }
        throw TableError.invalidQuery("The $filter has a malformed number '\(digits)' at position \(position).")
    }

    private func typedLiteral(_ type: String, _ value: String, at position: Int) throws(TableError) -> FilterLiteral {
        switch type.lowercased() {
        case "datetimeoffset", "datetime":
            guard let milliseconds = ProtocolDate.parse(value) else {
                throw TableError.invalidQuery(
                    "The $filter has a malformed date \(type)'\(value)' at position \(position); write it as "
                        + "datetimeoffset'2026-01-31T12:00:00.000Z' (milliseconds and an offset such as +01:00 are optional)."
                )
            }
            return .date(milliseconds)
        case "guid":
            return .string(value)
        default:
            throw TableError.invalidQuery(
                "The $filter has a literal of unknown type '\(type)' at position \(position); use datetimeoffset'…', datetime'…' or guid'…'."
            )
        }
    }

    // MARK: Tokens

    private func isKeyword(_ word: String) -> Bool {
        if case .name(let name) = token { return name.lowercased() == word }
        return false
    }

    private mutating func enter() throws(TableError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw failure("the filter nests more than \(Self.maximumDepth) levels deep; simplify it")
        }
    }

    private func failure(_ reason: String) -> TableError {
        let found: String
        switch token {
        case .end: found = "the end"
        default: found = "'" + String(text[tokenStart..<min(index, text.count)]) + "'"
        }
        return .invalidQuery("The $filter is not valid at position \(tokenStart) (\(found)): \(reason).")
    }

    private mutating func advance() throws(TableError) {
        while index < text.count, text[index].isWhitespace { index += 1 }
        tokenStart = index
        guard index < text.count else {
            token = .end
            return
        }
        let character = text[index]
        switch character {
        case "(":
            index += 1
            token = .open
        case ")":
            index += 1
            token = .close
        case ",":
            index += 1
            token = .comma
        case "'":
            token = .string(try quoted())
        case "0"..."9" where temporalLiteral() != nil:
            let (literal, end) = temporalLiteral()!
            index = end
            token = .temporal(literal)
        case "0"..."9", "-", "+", ".":
            var end = index + 1
            while end < text.count {
                let next = text[end]
                if next.isASCII, next.isNumber || ".eElLmMdDfF".contains(next) {
                    end += 1
                } else if (next == "-" || next == "+"), "eE".contains(text[end - 1]) {
                    end += 1
                } else {
                    break
                }
            }
            let digits = String(text[index..<end])
            guard digits.contains(where: \.isNumber) else {
                throw TableError.invalidQuery("The $filter has an unexpected '\(character)' at position \(index).")
            }
            index = end
            token = .number(digits)
        case _ where character.isLetter || character == "_":
            var end = index + 1
            while end < text.count,
                text[end].isLetter || text[end].isNumber || text[end] == "_" || text[end] == "/" || text[end] == "."
            {
                end += 1
            }
            let word = String(text[index..<end])
            index = end
            if index < text.count, text[index] == "'" {
                token = .typed(type: word, value: try quoted())
            } else {
                token = .name(word)
            }
        default:
            throw TableError.invalidQuery(
                "The $filter has an unexpected character '\(character)' at position \(index); strings go in single quotes."
            )
        }
    }

    /// A bare date (`2026-01-31`), time of day (`14:30`, `14:30:00.5`) or date-time
    /// (`2026-01-31T12:00:00.000Z`) starting at `index`, and where it ends; `nil` when the text
    /// there is not one (a number, say).
    private func temporalLiteral() -> (FilterLiteral, Int)? {
        var end = index
        while end < text.count, text[end].isASCII, text[end].isNumber || "-:.TZ+".contains(text[end]) { end += 1 }
        let word = String(text[index..<end])
        guard word.contains("-") || word.contains(":") else { return nil }
        if let date = DeclaredType.dateOnly(word) { return (.dateOnly(date), end) }
        if word.contains("T"), let milliseconds = ProtocolDate.parse(word) { return (.date(milliseconds), end) }
        if !word.contains("-"), let time = DeclaredType.timeOfDay(word) { return (.timeOfDay(time), end) }
        return nil
    }

    /// Reads a single-quoted string starting at `index` (`''` is one quote).
    private mutating func quoted() throws(TableError) -> String {
        let start = index
        index += 1
        var value = ""
        while index < text.count {
            let character = text[index]
            index += 1
            if character == "'" {
                if index < text.count, text[index] == "'" {
                    value.append("'")
                    index += 1
                } else {
                    return value
                }
            } else {
                value.append(character)
            }
        }
        throw TableError.invalidQuery(
            "The $filter has a string opened at position \(start) that is never closed; end it with ' (write '' for a quote inside)."
        )
    }
}
