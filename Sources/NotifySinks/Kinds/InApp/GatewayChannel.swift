import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The gateway's connections: Hummingbird's HTTP/1 channel with the WebSocket upgrade, and in
/// front of the upgrade a check of the bearer token. Hummingbird answers a refused upgrade with a
/// bare `400` (and a plain request for the gateway's path with `404`); for a request whose token is
/// missing or refused, that answer becomes `401` with a `WWW-Authenticate` challenge (RFC 6750).
struct GatewayChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let upgrade: HTTP1WebSocketUpgradeChannel
    /// `nil` when the request may go on, else what is wrong with its token.
    let refusal: @Sendable (HTTPRequestHead) async -> String?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        upgrade.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let upgrader = try pipeline.handler(
                type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try pipeline.addHandler(BearerTokenChallenge(refusal: refusal), position: .before(upgrader))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await upgrade.handle(value: value, logger: logger)
    }
}

/// Looks at a connection's first request: one whose token is accepted (or that is not for the
/// gateway's path) goes on and the handler leaves the pipeline; for one whose token is refused, the
/// `400` or `404` the server answers becomes `401` with `WWW-Authenticate`. The request waits here,
/// with whatever the client sends after it, while its token is checked (an async check, off the event loop).
final class BearerTokenChallenge: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        /// No request head yet.
        case awaitingHead
        /// The head's token is being checked; what was read so far waits.
        case checking(held: [NIOAny])
        /// Checked: `nil` when the request goes on, else what is wrong with its token.
        case checked(problem: String?)
    }

    private let refusal: @Sendable (HTTPRequestHead) async -> String?
    private var state = State.awaitingHead
    private var removed = false

    init(refusal: @escaping @Sendable (HTTPRequestHead) async -> String?) {
        self.refusal = refusal
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .checked:
            context.fireChannelRead(data)
        case .checking(var held):
            held.append(data)
            state = .checking(held: held)
        case .awaitingHead:
            guard case .head(let head) = unwrapInboundIn(data) else {
                context.fireChannelRead(data)
                return
            }
            state = .checking(held: [data])
            let refusal = self.refusal
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.makeFutureWithTask { await refusal(head) }.whenSuccess { problem in
                let (handler, context) = bound.value
                handler.checked(problem: problem, context: context)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .checking = state { return }
        context.fireChannelReadComplete()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
    }

    /// Passes on what was held, and leaves the pipeline when the request goes on.
    private func checked(problem: String?, context: ChannelHandlerContext) {
        guard !removed, case .checking(let held) = state else { return }
        state = .checked(problem: problem)
        guard context.channel.isActive else { return }
        for data in held { context.fireChannelRead(data) }
        context.fireChannelReadComplete()
        // After an accepted head come the WebSocket's bytes, which are not this handler's business.
        if problem == nil { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .checked(let problem?) = state, case .head(var head) = unwrapOutboundIn(data),
            head.status == .badRequest || head.status == .notFound
        else {
            context.write(data, promise: promise)
            return
        }
        head.status = .unauthorized
        let description = problem.replacingOccurrences(of: "\"", with: "'")
        head.headers.replaceOrAdd(
            name: "WWW-Authenticate",
            value: "Bearer realm=\"notify\", error=\"invalid_token\", error_description=\"\(description)\"")
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
