import HTTPServer
import SyncProtocol

/// What can go wrong in a table request; each case knows its HTTP status and a message that says
/// what the caller can do about it.
enum TableError: Error, HTTPResponseError, Equatable {
    /// 400: a query option (`$filter`, `$orderby`, `$top`…) that cannot be run; the message says where.
    case invalidQuery(String)
    /// 400: a body or request that cannot be stored as it is.
    case invalidRequest(String)
    /// 400: a `ZUMO-API-VERSION` other than 2.0.x.
    case unsupportedAPIVersion
    /// 401: the service has an application key and the request did not carry it.
    case missingApplicationKey
    /// 404: the item is missing or soft-deleted.
    case itemNotFound
    /// 404: no item was ever written to this table.
    case tableNotFound(String)
    /// 409: an insert with an id that exists, or a stale `version` in the body; carries the server item.
    case conflict(StoredItem)
    /// 412: `If-Match` names another version; carries the server item.
    case preconditionFailed(StoredItem)
    /// 500: SQLite failed; the detail is logged, not sent.
    case storage(String)

    var status: Int {
        switch self {
        case .invalidQuery, .invalidRequest, .unsupportedAPIVersion: 400
        case .missingApplicationKey: 401
        case .itemNotFound, .tableNotFound: 404
        case .conflict: 409
        case .preconditionFailed: 412
        case .storage: 500
        }
    }

    var message: String {
        switch self {
        case .invalidQuery(let message), .invalidRequest(let message): message
        case .unsupportedAPIVersion: ProtocolMessage.invalidAPIVersion
        case .missingApplicationKey:
            "This service requires an application key: send it in the X-ZUMO-APPLICATION header."
        case .itemNotFound: ProtocolMessage.itemDoesNotExist
        case .tableNotFound(let table):
            "The table '\(table)' does not exist; it is created by the first item inserted into it."
        case .conflict:
            "The item has changed on the server (or already exists); the body holds the server's item."
        case .preconditionFailed:
            "The item has changed on the server since the version given in If-Match; the body holds the server's item."
        case .storage:
            "The table service could not read or write its database. The error has been logged; please try again."
        }
    }
}
