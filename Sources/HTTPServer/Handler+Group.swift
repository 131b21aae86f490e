extension Handler {
    /// This handler as a group's route runs it: the groups' middleware around it (answering early,
    /// amending every answer), and its errors, the middleware's too, rendered by `errorRenderer` (its
    /// innermost group's, else the router's) before the middleware amends them.
    func wrapped(in middleware: [any Middleware], errorRenderer: @escaping Router.ErrorRendering) -> Handler {
        let group = GroupRun(middleware: middleware, errorRenderer: errorRenderer)
        switch self {
        case .sync(let body):
            return .sync { request in group.run(request) { try body($0) } }
        case .async(let body, let executor):
            return .async({ request in await group.run(request) { try await body($0) } }, on: executor)
        }
    }
}

/// What a group does around each of its handlers.
private struct GroupRun: Sendable {
    let middleware: [any Middleware]
    let errorRenderer: Router.ErrorRendering

    func run(_ incoming: Request, _ body: (Request) throws -> Response) -> Response {
        var request = incoming
        do {
            if let early = try intercept(&request) { return finish(request, early) }
            return finish(request, try body(request))
        } catch {
            return finish(request, errorRenderer(request, Responder.httpError(error)))
        }
    }

    func run(_ incoming: Request, _ body: (Request) async throws -> Response) async -> Response {
        var request = incoming
        do {
            if let early = try intercept(&request) { return finish(request, early) }
            return finish(request, try await body(request))
        } catch {
            return finish(request, errorRenderer(request, Responder.httpError(error)))
        }
    }

    private func intercept(_ request: inout Request) throws -> Response? {
        for item in middleware {
            if let early = try item.intercept(&request) { return early }
        }
        return nil
    }

    private func finish(_ request: Request, _ response: Response) -> Response {
        var response = response
        for item in middleware.reversed() { item.finish(request, &response) }
        return response
    }
}
