import HTTPServer

/// Refuses every request that could change something (any method but GET, HEAD and OPTIONS) with
/// 403 "this is a read-only support bundle": the dashboard of `todosync open-bundle`. It runs before
/// the CSRF check, so that a form without a token gets the same answer.
struct ReadOnlyGuard: Middleware {
    static let message = "this is a read-only support bundle"

    func intercept(_ request: inout Request) throws -> Response? {
        switch request.method {
        case .get, .head, .options: return nil
        // Signing in and out changes who reads, never the bundle.
        case .post where [SignInController.path, SignInController.signOut].contains(request.path): return nil
        default: throw HTTPError(.forbidden, Self.message)
        }
    }
}
