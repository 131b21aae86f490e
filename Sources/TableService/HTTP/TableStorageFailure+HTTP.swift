import HTTPTypes

/// The answer a client gets for each storage failure: the only place that decides it.
extension TableStorageFailure {
    /// The message of a filter the database refuses for its size.
    static let filterTooComplexMessage =
        "The $filter is too complex for the database (too deeply nested or too many conditions); "
        + "simplify it or split the query."

    /// The message of a failure the service cannot explain to the client (the detail is logged).
    static let serverFailureMessage =
        "The table service could not read or write its database. The error has been logged; please try again."

    /// The message of a write the disk would not save (the detail is logged).
    static let notDurableMessage =
        "The table service could not save the change to its disk, so it is not confirmed; keep it and "
        + "send it again later. The service's operator must check its disk and restart it."

    /// The HTTP status: the client's fault (400, 409) or the service's (500 or 503, logged).
    var status: HTTPResponse.Status {
        switch self {
        case .queryTooComplex: .badRequest
        case .duplicateID: .conflict
        case .notDurable: .serviceUnavailable
        case .unavailable, .tooLarge, .corrupt, .keptChanging, .other: .internalServerError
        }
    }

    /// The message of the JSON error body (or of the service page).
    var message: String {
        switch self {
        case .queryTooComplex: Self.filterTooComplexMessage
        case .duplicateID:
            "An item with this id already exists on the service; choose another id (or update that item)."
        case .notDurable: Self.notDurableMessage
        case .unavailable, .tooLarge, .corrupt, .keptChanging, .other: Self.serverFailureMessage
        }
    }

    /// Whether the service logs the failure: those the client cannot fix.
    var isLogged: Bool { status.code >= 500 }
}
