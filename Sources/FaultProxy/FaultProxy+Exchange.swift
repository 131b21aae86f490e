import NIOCore

extension FaultProxy {
    /// Decides one exchange: records the request, lets the interceptor (if any) or the plan's
    /// fault settle it, and returns what to do on the client's connection. Never blocks the event
    /// loop: a delay is a scheduled task, an interceptor a task of its own.
    func exchange(_ request: ProxiedRequest, on eventLoop: any EventLoop) -> EventLoopFuture<ClientAction> {
        let (sequence, fault, interceptor) = record(request)
        let keepAlive = request.keepAlive
        guard let interceptor else {
            return applying(fault, to: request, sequence: sequence, on: eventLoop)
        }
        let upstream = ProxyUpstream(forwarder: forwarder)
        return eventLoop.makeFutureWithTask { try await interceptor(request, upstream) }
            .flatMap { interception in
                guard let interception else {
                    return self.applying(fault, to: request, sequence: sequence, on: eventLoop)
                }
                self.finish(sequence, fault: .passThrough, upstreamStatus: nil, failure: nil)
                return eventLoop.makeSucceededFuture(.intercepted(interception, keepAlive: keepAlive))
            }
            .flatMapErrorThrowing { error in
                self.finish(sequence, fault: .passThrough, upstreamStatus: nil, failure: "interceptor: \(error)")
                return .badGateway("\(error)", keepAlive: keepAlive)
            }
    }

    /// The plan's part of an exchange: the fault before, during and after forwarding.
    private func applying(
        _ fault: Fault, to request: ProxiedRequest, sequence: Int, on eventLoop: any EventLoop
    ) -> EventLoopFuture<ClientAction> {
        let keepAlive = request.keepAlive
        if let action = ClientAction.beforeForwarding(fault, keepAlive: keepAlive) {
            finish(sequence, fault: fault, upstreamStatus: nil, failure: nil)
            return eventLoop.makeSucceededFuture(action)
        }
        let waited: EventLoopFuture<Void> =
            if case .delay(let milliseconds) = fault {
                eventLoop.scheduleTask(in: .milliseconds(Int64(milliseconds))) {}.futureResult
            } else {
                eventLoop.makeSucceededVoidFuture()
            }
        if request.wantsEventStream {
            return waited.map {
                self.finish(sequence, fault: fault, upstreamStatus: nil, failure: nil)
                return .relaying(request, under: fault)
            }
        }
        let forwarder = self.forwarder
        return waited.flatMap { forwarder.send(request, on: eventLoop) }
            .flatMap { first -> EventLoopFuture<ClientAction> in
                let deliver: @Sendable (ProxiedResponse) -> ClientAction = { response in
                    self.finish(sequence, fault: fault, upstreamStatus: first.status, failure: nil)
                    return .delivering(response, under: fault, keepAlive: keepAlive, sequence: sequence)
                }
                guard fault == .duplicate else { return eventLoop.makeSucceededFuture(deliver(first)) }
                return forwarder.send(request, on: eventLoop).map(deliver).recover { error in
                    self.finish(sequence, fault: fault, upstreamStatus: first.status, failure: "\(error)")
                    return .badGateway("\(error)", keepAlive: keepAlive)
                }
            }
            .recover { error in
                self.finish(sequence, fault: fault, upstreamStatus: nil, failure: "\(error)")
                return .badGateway("\(error)", keepAlive: keepAlive)
            }
    }
}
