import HTTPTypes

extension HTTPField.Name {
    /// `X-Frame-Options`: whether other sites may frame a page.
    public static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    /// `Referrer-Policy`: how much of a page's address other sites learn.
    public static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    /// `Link`: the table protocol's next page (`<url>; rel=next`).
    public static let link = HTTPField.Name("Link")!
}
