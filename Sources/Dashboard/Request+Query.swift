import HTTPServer

extension Request {
    /// The route's `:id`, a change's number; anything else is a 404 saying `missing`.
    func operationId(missing: String) throws(HTTPError) -> Int64 {
        guard let id = parameters["id"].flatMap(Int64.init) else { throw HTTPError(.notFound, missing) }
        return id
    }

    /// The query parameter `name` read by `parse`: nil when it is absent or empty, a 400 with the
    /// message `mistake` gives for the value when it does not parse.
    func query<Value>(
        _ name: String, as parse: (String) -> Value?, mistake: (String) -> String
    ) throws(HTTPError) -> Value? {
        guard let text = query(name), !text.isEmpty else { return nil }
        guard let value = parse(text) else { throw HTTPError(.badRequest, mistake(text)) }
        return value
    }

    /// A whole number from 0 (a list's page key), or nil when absent.
    func key(_ name: String, mistake: String) throws(HTTPError) -> Int64? {
        try query(name, as: { Int64($0).flatMap { $0 >= 0 ? $0 : nil } }, mistake: { _ in mistake })
    }

    /// `limit` from 1 to `maximum`, else `default`.
    func limit(default value: Int, maximum: Int) throws(HTTPError) -> Int {
        try query(
            "limit", as: { Int($0).flatMap { (1...maximum).contains($0) ? $0 : nil } },
            mistake: { _ in "'limit' must be a whole number from 1 to \(maximum)." }) ?? value
    }

    /// `at=last`: whether the last page is asked for.
    func atLast() throws(HTTPError) -> Bool {
        try query("at", as: { $0 == "last" ? true : nil }, mistake: { _ in "Use at=last for the last page." }) ?? false
    }
}
