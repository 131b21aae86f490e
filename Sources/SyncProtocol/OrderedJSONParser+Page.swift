extension OrderedJSONParser {
    /// A page of items as a service sends it: a JSON array of objects, or an object whose
    /// `results` (Mobile Apps) or `items` (Datasync, beside `nextLink`) member is that array, with
    /// the total in `count` when asked for (`$inlinecount=allpages`, `$count=true`).
    public struct Page {
        /// The items, each with its members in order.
        public var items: [Members] = []
        /// The number of items the whole query has, when the service said.
        public var count: Int?
    }

    /// The page in `bytes`; fails unless it is one of the two shapes of ``Page``, with an error
    /// naming what is wrong and where.
    public static func page(_ bytes: [UInt8], maximumDepth: Int = maximumDepth) throws(Failure) -> Page {
        var parser = OrderedJSONParser(bytes, maximumDepth: maximumDepth)
        var page = Page()
        parser.skipWhitespace()
        switch parser.peek() {
        case UInt8(ascii: "["):
            page.items = try parser.items()
        case UInt8(ascii: "{"):
            var hasResults = false
            try parser.eachMember { parser, name throws(Failure) in
                switch name {
                case "results", "items":
                    guard parser.peek() == UInt8(ascii: "[") else { throw parser.failure("'\(name)' is not an array") }
                    page.items = try parser.items()
                    hasResults = true
                case "count":
                    switch try parser.value() {
                    case .null: break  // Datasync without $count=true
                    case .number(let count) where Int(exactly: count).map({ $0 >= 0 }) == true:
                        page.count = Int(exactly: count)
                    default: throw parser.failure("'count' is not a whole number")
                    }
                default:
                    _ = try parser.value()
                }
            }
            guard hasResults else { throw Failure(message: "an object without 'results' or 'items'") }
        default:
            throw Failure(message: "neither an array nor an object")
        }
        parser.skipWhitespace()
        guard parser.isAtEnd else { throw parser.failure("text after the end of the page") }
        return page
    }

    /// An array whose elements are all objects, read at the parser's position.
    private mutating func items() throws(Failure) -> [Members] {
        var items: [Members] = []
        try eachElement { parser throws(Failure) in
            guard parser.peek() == UInt8(ascii: "{") else {
                throw parser.failure("item \(items.count + 1) is not an object")
            }
            items.append(try parser.members())
        }
        return items
    }
}
