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
        var page = Page()
        page.count = try self.page(bytes, maximumDepth: maximumDepth) { page.items.append($0) }
        return page
    }

    /// Reads the page in `bytes` as ``page(_:maximumDepth:)`` does, handing each item to `readItem`
    /// as soon as it is read, and returns the page's `count`. The members of an item are read into
    /// one buffer that the next item reuses: a page of rows makes no array of members per row
    /// (growing one, member by member, was a tenth of a pulled page's decoding).
    public static func page(
        _ bytes: [UInt8], maximumDepth: Int = maximumDepth, eachItem readItem: (Members) -> Void
    ) throws(Failure) -> Int? {
        var parser = OrderedJSONParser(bytes, maximumDepth: maximumDepth)
        var count: Int?
        parser.skipWhitespace()
        switch parser.peek() {
        case UInt8(ascii: "["):
            try parser.items(readItem)
        case UInt8(ascii: "{"):
            var hasResults = false
            try parser.eachMember { parser, name throws(Failure) in
                switch name {
                case "results", "items":
                    guard parser.peek() == UInt8(ascii: "[") else { throw parser.failure("'\(name)' is not an array") }
                    try parser.items(readItem)
                    hasResults = true
                case "count":
                    switch try parser.value() {
                    case .null: break  // Datasync without $count=true
                    case .number(let total) where Int(exactly: total).map({ $0 >= 0 }) == true:
                        count = Int(exactly: total)
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
        return count
    }

    /// An array whose elements are all objects, read at the parser's position.
    private mutating func items(_ readItem: (Members) -> Void) throws(Failure) {
        var members: Members = []
        var read = 0
        try eachElement { parser throws(Failure) in
            guard parser.peek() == UInt8(ascii: "{") else {
                throw parser.failure("item \(read + 1) is not an object")
            }
            members.removeAll(keepingCapacity: true)
            try parser.eachMember { parser, name throws(Failure) in members.append((name, try parser.value())) }
            readItem(members)
            read += 1
        }
    }
}
