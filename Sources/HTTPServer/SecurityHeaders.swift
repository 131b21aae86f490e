import HTTPTypes

/// Adds the headers every dashboard page needs: a Content-Security-Policy without inline
/// script, `X-Frame-Options: DENY` (no clickjacking of buttons), `nosniff` and no referrer leaks.
public struct SecurityHeaders: Middleware {
    public init() {}

    public func finish(_ request: Request, _ response: inout Response) {
        response.headers[.contentSecurityPolicy] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
    }
}
