import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOSSL
import SyncProtocol
import Synchronization

/// The HTTP side of the table protocol: a pool of keep-alive connections (async-http-client),
/// the protocol headers, and two deadlines on every exchange (``ExchangeDeadlines``).
///
/// URLSession on Linux managed only ~1.8k sequential requests a second here and, after a
/// dropped keep-alive connection, re-sent a request without its body; async-http-client does
/// neither.
///
/// Redirects are decided here, not by the HTTP client: see ``RedirectPolicy``.
final class HTTPTransport: Sendable {
    let baseURL: URL
    let applicationKey: String?
    /// The signed-in user's token, sent as ``authStyle`` says; never logged or put in a message.
    let authToken: String?
    /// How the token is sent; nil: as the protocol's own clients send it (``AuthStyle/usual(for:)``).
    let authStyle: AuthStyle?
    /// Where tokens come from when a command gives them (``TokenCommand``); ``authToken`` otherwise.
    let tokenSupply: TokenSupply?
    /// A PEM file of CAs trusted besides the system's (`--ca-file`).
    let caFile: String?
    /// Lets the key and the token go in plain HTTP to another machine (`--allow-plain-http`).
    let allowPlainHTTP: Bool
    let base: String
    let deadlines: ExchangeDeadlines
    let client: HTTPClient
    /// The protocol spoken (its `ZUMO-API-VERSION`, paging and write methods).
    let tableProtocol: TableProtocol
    /// Where every exchange goes when it ends, with its secrets removed by `redaction`.
    private let recorder: FlightRecorder?
    private let redaction: Redaction
    /// Sent as `X-ZUMO-INSTALLATION-ID`: this store's id, so the service can tell who is behind.
    let installationID: String?
    /// What this device tells the service's fleet view (its queue; a bundle asked for).
    let reporting: DeviceReporting?
    /// The service's epoch as its answers tell it.
    let epochs: EpochWatch

    /// Largest answer read; a page of 1,000 rows is about 200 KB.
    static let maximumBody = 64 << 20

    init(
        baseURL: URL, applicationKey: String?, authToken: String? = nil, authStyle: AuthStyle? = nil,
        tokenSupply: TokenSupply? = nil, caFile: String? = nil, allowPlainHTTP: Bool = false,
        deadlines: ExchangeDeadlines, tableProtocol: TableProtocol = .v2,
        recorder: FlightRecorder? = nil, installationID: String? = nil, reporting: DeviceReporting? = nil,
        epochs: EpochWatch = EpochWatch()
    ) {
        self.epochs = epochs
        self.installationID = installationID
        self.reporting = reporting
        self.caFile = caFile
        self.allowPlainHTTP = allowPlainHTTP
        self.tableProtocol = tableProtocol
        self.authStyle = authStyle
        self.tokenSupply = tokenSupply
        self.baseURL = baseURL
        self.applicationKey = applicationKey
        self.authToken = authToken.flatMap { $0.isEmpty ? nil : $0 }
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.deadlines = deadlines
        client = Self.client(caFile: caFile)
        self.recorder = recorder
        redaction = Redaction(secrets: [applicationKey, self.authToken])
    }

    /// One pool of keep-alive connections per set of trusted CAs for the process (never shut down,
    /// like `HTTPClient.shared`). A connection that cannot be made fails the request at once, instead
    /// of retrying with a back-off: an offline client should say "unreachable" now.
    private static func client(caFile: String?) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[caFile] { return client }
            var configuration = HTTPClient.Configuration()
            if let caFile {
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.additionalTrustRoots = [.file(caFile)]
                configuration.tlsConfiguration = tls
            }
            configuration.connectionPool.retryConnectionEstablishment = false
            // A push keeps up to its window of requests on the wire at once, each on a keep-alive
            // connection of its own (async-http-client's default is 8 per host).
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit =
                SyncConfiguration.maximumPushWindow
            // An idle connection is closed by us before the service closes it (Node's default, which
            // the official Mobile Apps server runs on, is 5 s; todosync serve's is 30 s): a request
            // sent on a connection the service is just closing fails as unreachable.
            configuration.connectionPool.idleTimeout = .seconds(4)
            // Followed (or refused) by `send`, so that nothing goes to another origin.
            configuration.redirectConfiguration = .disallow
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            clients[caFile] = client
            return client
        }
    }

    /// The pools, by the file of CAs they trust besides the system's.
    private static let clients = Mutex<[String?: HTTPClient]>([:])

    /// The same transport speaking `tableProtocol`.
    func speaking(_ tableProtocol: TableProtocol) -> HTTPTransport {
        HTTPTransport(
            baseURL: baseURL, applicationKey: applicationKey, authToken: authToken, authStyle: authStyle,
            tokenSupply: tokenSupply, caFile: caFile, allowPlainHTTP: allowPlainHTTP, deadlines: deadlines,
            tableProtocol: tableProtocol, recorder: recorder, installationID: installationID, reporting: reporting,
            epochs: epochs)
    }

    /// The same transport with another token or style.
    func signedIn(token: String?, style: AuthStyle?) -> HTTPTransport {
        HTTPTransport(
            baseURL: baseURL, applicationKey: applicationKey, authToken: token, authStyle: style,
            tokenSupply: tokenSupply, caFile: caFile, allowPlainHTTP: allowPlainHTTP, deadlines: deadlines,
            tableProtocol: tableProtocol, recorder: recorder, installationID: installationID, reporting: reporting,
            epochs: epochs)
    }

    /// Refuses to send a secret in plain HTTP to another machine than this one.
    func checkPlainHTTP(sendsSecret: Bool) throws(SyncError) {
        guard sendsSecret, !allowPlainHTTP, baseURL.scheme?.lowercased() == "http" else { return }
        let host = (baseURL.host ?? "").lowercased()
        // 0.0.0.0 and :: are this machine too (a service bound to every interface, reached as such).
        let loopback = ["localhost", "::1", "[::1]", "0.0.0.0", "::", "[::]"].contains(host) || host.hasPrefix("127.")
        if !loopback { throw .stopped(.plainHTTPRefused(host: host)) }
    }

    /// How many times one request renews a token the service refused before it takes the 401.
    static let maximumRenewals = 3

    /// The token to send now: the command's (run if need be), else the saved one.
    func currentToken() async throws(SyncError) -> String? {
        if let tokenSupply { return try await tokenSupply.current() }
        return authToken
    }

    /// Whether requests carry a sign-in token (saved, or a command's).
    var signsIn: Bool { authToken != nil || tokenSupply != nil }

    /// The header field carrying `token` as ``authStyle`` says; nil without a token.
    func authField(_ token: String?) -> HTTPField? {
        token.map { (authStyle ?? .usual(for: tableProtocol)).field($0) }
    }

    /// `/tables/{table}` or `/tables/{table}/{id}`, each segment percent-encoded.
    func path(table: String, id: String? = nil) -> String {
        "/tables/" + Self.encode(table) + (id.map { "/" + Self.encode($0) } ?? "")
    }

    /// Sends one request; HTTP error statuses are answers, not errors. Redirects within the service
    /// are followed for GET; others are refused (``RedirectPolicy``).
    ///
    /// - Throws: ``SyncError/stopped(_:)`` when the exchange failed (unreachable, a deadline passed,
    ///   cancelled, a redirect refused: ``StopReason/redirectRefused(to:)``), ``SyncError/serviceFault(_:)``
    ///   for an answer larger than ``maximumBody``.
    ///
    /// `apiVersion` is the `ZUMO-API-VERSION` sent when not the transport's protocol's (the protocol
    /// doctor asks in both).
    func send(
        _ method: HTTPRequest.Method, _ path: String, query: [(String, String)] = [], body: Data? = nil,
        ifMatch version: String? = nil, apiVersion: String? = nil, contentType: String = "application/json",
        for purpose: ExchangePurpose
    ) async throws(SyncError) -> HTTPReply {
        var text = base + path
        if !query.isEmpty {
            text += "?" + query.map { Self.encode($0.0) + "=" + Self.encode($0.1) }.joined(separator: "&")
        }
        var token = try await currentToken()
        try checkPlainHTTP(sendsSecret: token != nil || applicationKey.map { !$0.isEmpty } == true)
        var renewals = 0
        for _ in 0...RedirectPolicy.maximumHops {
            var reply = try await exchange(
                method, text, body: body, ifMatch: version, apiVersion: apiVersion, contentType: contentType,
                token: token, for: purpose)
            // A token the service refused is renewed and the request sent again with the new one. More
            // than once: while this request waited, the others of a push window may have used the new
            // token until the service refused it too. A service that refuses every new token stops it.
            // A revoked user or device is refused whatever its token: renewing it would not help.
            while reply.status == .unauthorized, AccessRevocation.of(reply.body) == nil, let tokenSupply,
                let sent = token, renewals < Self.maximumRenewals
            {
                renewals += 1
                token = try await tokenSupply.refused(sent)
                reply = try await exchange(
                    method, text, body: body, ifMatch: version, apiVersion: apiVersion, contentType: contentType,
                    token: token, for: purpose)
            }
            if reply.status == .unauthorized, let revocation = AccessRevocation.of(reply.body) {
                throw .stopped(.accessRevoked(revocation))
            }
            guard RedirectPolicy.redirectStatuses.contains(reply.status), let current = URL(string: text) else {
                return reply
            }
            switch RedirectPolicy.decide(
                method: method, current: current, location: reply.headers[.location], service: baseURL)
            {
            case .follow(let target): text = target.absoluteString
            case .refuse(let target): throw .stopped(.redirectRefused(to: target))
            }
        }
        throw .stopped(.unreachable("\(baseURL.absoluteString): more than \(RedirectPolicy.maximumHops) redirects"))
    }

    /// One request and its answer (a redirect is an answer here).
    private func exchange(
        _ method: HTTPRequest.Method, _ text: String, body: Data?, ifMatch version: String?, apiVersion: String?,
        contentType: String, token: String?, for purpose: ExchangePurpose
    ) async throws(SyncError) -> HTTPReply {
        var fields: HTTPFields = [
            ProtocolHeader.apiVersion: apiVersion ?? tableProtocol.apiVersion,
            .accept: "application/json",
        ]
        if let applicationKey, !applicationKey.isEmpty { fields[ProtocolHeader.applicationKey] = applicationKey }
        if let authField = authField(token) { fields.append(authField) }
        if let installationID { fields[ProtocolHeader.installationID] = installationID }
        if let state = reporting?.header() { fields[ProtocolHeader.clientState] = state }
        if let version { fields[.ifMatch] = EntityTag.header(for: version) }
        if body != nil { fields[.contentType] = contentType }
        let started = (date: Date(), instant: ContinuousClock.now, sent: deadlines.clock.now)
        let target = text.hasPrefix(base) ? String(text.dropFirst(base.count)) : text
        let (sentFields, sent) = (fields, RecordedExchange.kept(body))
        let record = { [recorder, redaction] (reply: HTTPReply?, failure: SyncError?) in
            guard let recorder else { return }
            let milliseconds = RecordedExchange.milliseconds(since: started.instant)
            let (answerFields, received) = (reply?.headers, RecordedExchange.kept(reply?.body))
            let (bytesSent, bytesReceived) = (body?.count ?? 0, reply?.body.count ?? 0)
            let (status, failure) = (reply?.status.code, failure?.description)
            // Redacted and cut when the recorder writes it, not on the way of the request.
            recorder.record {
                RecordedExchange(
                    id: 0, startedAt: started.date, milliseconds: milliseconds, method: method.rawValue,
                    target: redaction.text(target), purpose: purpose, status: status, failure: failure,
                    bytesSent: bytesSent, bytesReceived: bytesReceived, requestHeaders: redaction.headers(sentFields),
                    responseHeaders: answerFields.map(redaction.headers) ?? "",
                    requestBody: redaction.body(sent, whole: bytesSent, limit: RecordedExchange.maximumBody),
                    responseBody: redaction.body(received, whole: bytesReceived, limit: RecordedExchange.maximumBody))
            }
        }
        do {
            // async-http-client 1.x takes NIOHTTP1's method and headers: spelled here, and only here.
            let request = try HTTPClient.Request(
                url: text, method: NIOHTTP1.HTTPMethod(rawValue: method.rawValue),
                headers: NIOHTTP1.HTTPHeaders(fields.map { ($0.name.rawName, $0.value) }), body: body.map { .bytes($0) }
            )
            let reply: HTTPReply
            do {
                reply = try await perform(request, sent: started.sent)
            } catch let error where Self.sentNothing(error) {
                reply = try await perform(request, sent: started.sent)
            }
            record(reply, nil)
            if reply.headers[ProtocolHeader.bundleRequest] == "1" { reporting?.bundleAsked() }
            epochs.observe(reply.headers[ProtocolHeader.epoch])
            return reply
        } catch {
            let failure = describe(error, url: text)
            record(nil, failure)
            throw failure
        }
    }

    /// Whether a failed exchange put nothing on the wire, so that sending it once more is safe
    /// whatever the request:
    /// - the pool handed out a keep-alive connection the service had closed (it restarted, or closed
    ///   idle connections) before its close was seen;
    /// - a connection was refused. async-http-client hands a refusal to whichever request waits for
    ///   a connection, so a connection begun while the service was down can fail the first request
    ///   made after it came back.
    static func sentNothing(_ error: any Error) -> Bool {
        switch error {
        case ChannelError.ioOnClosedChannel: true
        case let error as IOError: error.errnoCode == ECONNREFUSED
        default: false
        }
    }

    /// Sends `request` and reads its whole answer, within the deadlines of an exchange sent at `sent`.
    ///
    /// async-http-client's request-and-delegate API is used because its answer is the whole body
    /// (its async API's is a stream).
    private func perform(_ request: HTTPClient.Request, sent: Date) async throws -> HTTPReply {
        let accumulator = HeardAccumulator(request: request, maxBodySize: Self.maximumBody, clock: deadlines.clock)
        let task = client.execute(request: request, delegate: accumulator)
        // A deadline that passes cancels the request, and is the error it ends with.
        let watch = deadlines.watch(started: sent, heard: accumulator.heard) { _ in task.cancel() }
        defer { watch.stop() }
        let response: HTTPClient.Response
        do {
            response = try await withTaskCancellationHandler {
                try await task.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            throw watch.passed ?? error
        }
        var headers = HTTPFields()
        for (name, value) in response.headers {
            guard let name = HTTPField.Name(name) else { continue }
            headers.append(HTTPField(name: name, value: value))
        }
        return HTTPReply(
            status: HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
            headers: headers,
            body: response.body.map { Data($0.readableBytesView) } ?? Data())
    }

    private static let unreserved: CharacterSet = {
        var set = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        set.insert(charactersIn: "$")
        return set
    }()

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
