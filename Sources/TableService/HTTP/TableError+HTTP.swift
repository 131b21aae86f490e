import HTTPServer
import HTTPTypes

/// The status each table error is answered with: the client's fault (4xx) or the service's (5xx).
extension TableError: HTTPResponseError {
    var status: HTTPResponse.Status {
        switch self {
        case .invalidQuery, .invalidRequest, .unsupportedAPIVersion: .badRequest
        case .missingApplicationKey, .signInRequired, .signInRefused, .revoked: .unauthorized
        case .foreignOrigin, .otherDevice: .forbidden
        case .notRevoked: .conflict
        case .tooLarge: .contentTooLarge
        case .itemNotFound, .tableNotFound: .notFound
        case .alreadyExists(.none): .badRequest
        case .conflict, .alreadyExists: .conflict
        case .gone: .gone
        case .methodNotAllowed: .methodNotAllowed
        case .preconditionFailed: .preconditionFailed
        case .unsupportedMediaType: .unsupportedMediaType
        case .storage(let failure): failure.status
        case .tooManySubscribers, .schemaMoved: .serviceUnavailable
        }
    }
}
