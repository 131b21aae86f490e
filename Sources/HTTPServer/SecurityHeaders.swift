/// Adds the headers every dashboard page needs: a Content-Security-Policy without inline
/// script, `X-Frame-Options: DENY` (no clickjacking of buttons), `nosniff` and no referrer leaks.
public struct SecurityHeaders: Middleware {
    public init() {}

    public func finish(_ request: Request, _ response: inout Response) {
        response.headers["Content-Security-Policy"] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        if response.headers["Cache-Control"] == nil { response.headers["Cache-Control"] = "no-store" }
    }
}
