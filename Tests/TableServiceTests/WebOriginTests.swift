import TableService
import Testing

/// Origins are compared by scheme, host and port, as browsers send them.
@Suite struct WebOriginTests {
    @Test func anOriginIsSchemeHostAndPort() throws {
        let origin = try #require(WebOrigin("HTTP://LocalHost:3000"))
        #expect(origin.scheme == "http")
        #expect(origin.host == "localhost")
        #expect(origin.port == 3000)
        #expect(origin.description == "http://localhost:3000")
        #expect(WebOrigin("http://[::1]:8080")?.host == "[::1]")
        #expect(WebOrigin("http://localhost") == WebOrigin("http://localhost:80"))
        #expect(WebOrigin("https://todo.example.org")?.port == 443)
        #expect(WebOrigin("http://localhost:3000") != WebOrigin("http://localhost:3001"))
        #expect(WebOrigin("http://localhost:3000") != WebOrigin("https://localhost:3000"))
    }

    @Test func whatIsNotAnOriginIsRefused() {
        for text in [
            "null", "localhost", "localhost:3000", "127.0.0.1", "*", "ftp://localhost", "http://",
            "http://localhost:3000/", "http://localhost/app", "http://localhost?x=1", "http://user@localhost",
            "http://localhost:0", "http://localhost:65536", "http://localhost:+80", "http://localhost:", "http://[::1",
            "http://[zz]", "http://local host",
        ] {
            #expect(WebOrigin(text) == nil, "\(text)")
        }
    }
}
