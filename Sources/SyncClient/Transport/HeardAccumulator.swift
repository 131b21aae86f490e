import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// async-http-client's ``ResponseAccumulator`` (the whole answer, up to a size), noting on a clock
/// when each part of the answer arrives, and when it ends, for the deadlines (``ExchangeDeadlines``).
///
/// Written here because async-http-client's own read timeout runs on the event loop's clock, which a
/// test cannot move.
final class HeardAccumulator: HTTPClientResponseDelegate {
    typealias Response = HTTPClient.Response

    private let accumulator: ResponseAccumulator
    private let clock: any WallClock
    let heard: HeardTime

    init(request: HTTPClient.Request, maxBodySize: Int, clock: any WallClock) {
        accumulator = ResponseAccumulator(request: request, maxBodySize: maxBodySize)
        self.clock = clock
        heard = HeardTime(since: clock.now)
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        heard.heard(at: clock.now)
        return accumulator.didReceiveHead(task: task, head)
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        heard.heard(at: clock.now)
        return accumulator.didReceiveBodyPart(task: task, buffer)
    }

    func didVisitURL(task: HTTPClient.Task<Response>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        accumulator.didVisitURL(task: task, request, head)
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {
        heard.end()
        accumulator.didReceiveError(task: task, error)
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        heard.end()
        return try accumulator.didFinishRequest(task: task)
    }
}
