import SyncProtocol

/// What can go wrong in a table request; each case has a message that says what the caller can do
/// about it, and an HTTP status (`HTTP/TableError+HTTP.swift`, the one place that decides it).
enum TableError: Error, Equatable {
    /// 400: a query option (`$filter`, `$orderby`, `$top`…) that cannot be run; the message says where.
    case invalidQuery(String)
    /// 400: a body or request that cannot be stored as it is.
    case invalidRequest(String)
    /// 400: a `ZUMO-API-VERSION` other than 2.0.x.
    case unsupportedAPIVersion
    /// 401: the service has an application key and the request did not carry it.
    case missingApplicationKey
    /// 401: the request needs a signed-in user and carries no token; the table, when one needs it.
    case signInRequired(table: String?)
    /// 401: the `X-ZUMO-AUTH` token is not valid; the reason says why (never the token).
    case signInRefused(String)
    /// 403: a write from a browser page whose origin is not on the service's allowed list.
    case foreignOrigin(String)
    /// 404: the item is missing or soft-deleted.
    case itemNotFound
    /// 404: no item was ever written to this table.
    case tableNotFound(String)
    /// 409: a stale `version` in the body; carries the server item.
    case conflict(StoredItem)
    /// 409: an insert with an id that exists, carrying the item; 400 when the item is another
    /// user's (`nil`), which the caller must not learn exists.
    case alreadyExists(StoredItem?)
    /// 410: the item is soft-deleted (v3; `__includedeleted=true` shows it).
    case gone
    /// 405: a method the request's protocol does not have there; the message says which to use,
    /// `allow` lists the methods it has.
    case methodNotAllowed(String, allow: String)
    /// 412: `If-Match` names another version; carries the server item.
    case preconditionFailed(StoredItem)
    /// 415: a write whose body is not declared as JSON (the content type sent, if any).
    case unsupportedMediaType(String?)
    /// The database failed; its status and message are the failure's (see `TableStorageFailure+HTTP.swift`).
    case storage(TableStorageFailure)
    /// The change channel has as many subscribers as it takes (`--max-subscribers`).
    case tooManySubscribers(Int)
    /// 503: the table gained a column between compiling a page and reading it, again and again (a
    /// page is compiled again at once: see ``TableStorage/page(_:table:style:declaration:scope:)``).
    case schemaMoved(String)
    /// The request's user or device had its access revoked by the service's admin.
    case revoked(Revocation)
    /// 409: an escrow deposit or wipe receipt from a device whose access is not revoked.
    case notRevoked
    /// 403: a request about another device than the one sending it; the message says which.
    case otherDevice(String)
    /// 413: a body over the most the route takes; the message says how much that is.
    case tooLarge(String)

    var message: String {
        switch self {
        case .invalidQuery(let message), .invalidRequest(let message): message
        case .unsupportedAPIVersion: ProtocolMessage.invalidAPIVersion
        case .missingApplicationKey:
            "This service requires an application key: send it in the X-ZUMO-APPLICATION header."
        case .signInRequired(let table?):
            "The table '\(table)' keeps each user's rows apart: sign in and send your token in the X-ZUMO-AUTH header."
        case .signInRequired(nil):
            "This service needs a signed-in user: sign in and send your token in the X-ZUMO-AUTH header."
        case .signInRefused(let reason):
            "The sign-in token was refused: \(reason). Sign in again and send the new token in X-ZUMO-AUTH."
        case .foreignOrigin(let origin):
            "Writes from web pages on \(origin) are refused: that origin is not on this service's allowed list. "
                + "Call the service from an allowed page, or from a program (without an Origin header)."
        case .unsupportedMediaType(let type?):
            "The body is sent as '\(type)'; the table service accepts only JSON. Send it with "
                + "Content-Type: application/json."
        case .unsupportedMediaType(nil):
            "The body has no Content-Type; the table service accepts only JSON. Send it with "
                + "Content-Type: application/json."
        case .itemNotFound: ProtocolMessage.itemDoesNotExist
        case .tableNotFound(let table):
            "The table '\(table)' does not exist; it is created by the first item inserted into it."
        case .conflict:
            "The item has changed on the server; the body holds the server's item."
        case .alreadyExists(.none):
            "The item cannot be inserted with this id; choose another id, or leave it out to get a new one."
        case .alreadyExists:
            "An item with this id already exists on the service; choose another id (or update that item)."
        case .gone:
            "The item has been deleted; add __includedeleted=true to the query to read or change it."
        case .methodNotAllowed(let message, _): message
        case .preconditionFailed:
            "The item has changed on the server since the version given in If-Match; the body holds the server's item."
        case .storage(let failure): failure.message
        case .tooManySubscribers(let limit):
            "The change channel has its \(limit) subscribers; subscribe again after Retry-After, or sync by polling meanwhile."
        case .schemaMoved(let table):
            "The table '\(table)' kept gaining columns while it was read; send the request again."
        case .revoked(let revocation): revocation.message
        case .notRevoked:
            "This device's access is not revoked: it syncs as usual, and has nothing to deposit in escrow."
        case .otherDevice(let message), .tooLarge(let message): message
        }
    }
}
