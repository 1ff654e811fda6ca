import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// A request for ``HTTP2Client``: sent as one HEADERS frame and, with a body, one DATA frame.
struct HTTP2Request: Sendable {
    var method: String
    /// The path and query, `/3/device/<token>`.
    var path: String
    /// Regular (lowercase) header fields; the pseudo-headers are added by the client.
    var headers: HPACKHeaders
    var body: ByteBuffer?
}

/// A complete HTTP/2 response.
struct HTTP2Response: Sendable {
    var status: Int
    var headers: HPACKHeaders
    var body: ByteBuffer
}

/// Why an exchange failed before a response arrived. Every case is a passing failure.
enum HTTP2ClientError: Error, CustomStringConvertible {
    case connectionClosed
    case refusedByGoAway
    case streamReset(HTTP2ErrorCode)
    case timedOut
    case notHTTP2

    var description: String {
        switch self {
        case .connectionClosed: "the connection closed"
        case .refusedByGoAway: "the server is going away"
        case .streamReset(let code): "the stream was reset (\(code))"
        case .timedOut: "no answer in time"
        case .notHTTP2: "the server did not agree to HTTP/2"
        }
    }
}

/// An HTTP/2 client for one origin over TLS (certificate and host name always verified), that
/// multiplexes any number of concurrent requests over a few long-lived connections.
///
/// It speaks HTTP/2 frames directly (no per-stream channel, no HTTP/1 translation), which is
/// what APNs asks of a provider: few connections, many concurrent streams. A connection that
/// closes or receives GOAWAY is replaced on the next request.
final class HTTP2Client: Sendable {
    private let host: String
    private let port: Int
    private let authority: String
    private let tls: NIOSSLContext
    private let requestTimeout: TimeAmount
    private let group: any EventLoopGroup
    private let connections: [HTTP2ConnectionSlot]
    private let next = AtomicCounter()

    /// - Parameters:
    ///   - host: a DNS name (checked against the certificate and sent as SNI) or an IP address
    ///     (checked against the certificate's IP names).
    init(
        host: String, port: Int, configuration: HTTPTransportConfiguration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.host = host
        self.port = port
        authority = port == 443 ? host : "\(host):\(port)"
        var tls = try configuration.clientTLSConfiguration()
        tls.applicationProtocols = ["h2"]
        self.tls = try NIOSSLContext(configuration: tls)
        requestTimeout = .nanoseconds(Int64(configuration.requestTimeout.seconds * 1e9))
        self.group = group
        connections = (0..<max(1, configuration.connections)).map { _ in HTTP2ConnectionSlot() }
    }

    /// Sends `request` and returns the whole response; throws on transport failures.
    func send(_ request: HTTP2Request) async throws -> HTTP2Response {
        let slot = connections[next.increment() % connections.count]
        let connection = try await slot.connection { try await self.connect(slot) }
        let response = connection.channel.eventLoop.makePromise(of: HTTP2Response.self)
        connection.post(HTTP2Exchange(request: request, response: response))
        return try await response.futureResult.get()
    }

    /// Closes every connection; exchanges under way fail.
    func shutdown() async {
        for slot in connections {
            try? await slot.close()?.channel.close()
        }
    }

    private func connect(_ slot: HTTP2ConnectionSlot) async throws -> HTTP2Connection {
        let isAddress = (try? SocketAddress(ipAddress: host, port: port)) != nil
        let serverName = isAddress ? nil : host
        let tls = self.tls
        let authority = self.authority
        let requestTimeout = self.requestTimeout
        let negotiated = group.next().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    try sync.addHandler(ProtocolCheck(negotiated: negotiated))
                    try sync.addHandler(NIOHTTP2Handler(mode: .client))
                    try sync.addHandler(
                        HTTP2ExchangeHandler(authority: authority, timeout: requestTimeout) { [weak slot] in
                            slot?.forget(channel)
                        })
                }
            }
            .connect(host: host, port: port).get()
        do {
            try await negotiated.futureResult.get()
        } catch {
            try? await channel.close()
            throw error
        }
        return HTTP2Connection(channel: channel)
    }
}

/// An open connection, and the exchanges waiting to be written on it.
///
/// Requests come from many tasks; rather than one event-loop hop and one TLS record (and
/// `write`) each, they are queued here and written by one event-loop task in one flush.
private final class HTTP2Connection: Sendable {
    let channel: any Channel
    private let outbox = Mutex<[HTTP2Exchange]>([])

    init(channel: any Channel) {
        self.channel = channel
    }

    /// Queues `exchange` to be written with whatever else is waiting.
    func post(_ exchange: HTTP2Exchange) {
        let first = outbox.withLock { outbox in
            outbox.append(exchange)
            return outbox.count == 1
        }
        if first {
            channel.eventLoop.execute { self.drain() }
        }
    }

    /// Writes every queued exchange, then flushes once. Runs on the channel's event loop.
    private func drain() {
        let exchanges = outbox.withLock { outbox in
            defer { outbox.removeAll(keepingCapacity: true) }
            return outbox
        }
        guard channel.isActive else {
            for exchange in exchanges { exchange.response.fail(HTTP2ClientError.connectionClosed) }
            return
        }
        let pipeline = channel.pipeline.syncOperations
        for exchange in exchanges {
            pipeline.write(NIOAny(exchange), promise: nil)
        }
        pipeline.flush()
    }
}

/// One connection of an ``HTTP2Client``, made on first use and remade after it closes.
private final class HTTP2ConnectionSlot: Sendable {
    private let state = Mutex<Task<HTTP2Connection, any Error>?>(nil)

    /// The connection, connecting (once, for all callers) if there is none.
    func connection(connect: @escaping @Sendable () async throws -> HTTP2Connection) async throws -> HTTP2Connection {
        let task = state.withLock { state in
            if let state { return state }
            let task = Task { try await connect() }
            state = task
            return task
        }
        do {
            return try await task.value
        } catch {
            state.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }

    /// The connection over `channel` is no longer usable.
    func forget(_ channel: any Channel) {
        Task {
            let current = state.withLock { $0 }
            guard let current, let held = try? await current.value, held.channel === channel else { return }
            state.withLock { if $0 == current { $0 = nil } }
        }
    }

    /// Forgets the connection and returns it, to be closed.
    func close() async -> HTTP2Connection? {
        let task = state.withLock { state in
            defer { state = nil }
            return state
        }
        return try? await task?.value
    }
}

/// Connection-level flow control for handlers that work on HTTP/2 frames directly: without a
/// stream multiplexer nobody else gives the peer its credit back, and a connection stalls once
/// 64 KiB of DATA have arrived over its lifetime.
package enum HTTP2ConnectionWindow {
    /// The inbound window kept open for the peer.
    static let target = 1 << 20

    /// The WINDOW_UPDATE to send after `event`, when it says the connection's inbound window
    /// fell below half the target.
    package static func update(after event: Any) -> HTTP2Frame? {
        guard let update = event as? NIOHTTP2WindowUpdatedEvent, update.streamID == .rootStream,
            let inbound = update.inboundWindowSize, inbound < target / 2
        else { return nil }
        return HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: target - inbound))
    }
}

/// Fails the connection unless TLS negotiated `h2`.
private final class ProtocolCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let negotiated: EventLoopPromise<Void>
    private var decided = false

    init(negotiated: EventLoopPromise<Void>) {
        self.negotiated = negotiated
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiatedProtocol) = event {
            if negotiatedProtocol == "h2" {
                decide(.success(()))
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            } else {
                decide(.failure(HTTP2ClientError.notHTTP2))
                context.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        decide(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        decide(.failure(HTTP2ClientError.connectionClosed))
        context.fireChannelInactive()
    }

    private func decide(_ result: Result<Void, any Error>) {
        guard !decided else { return }
        decided = true
        negotiated.completeWith(result)
    }
}

/// A request on its way to the connection's event loop, with the promise of its response.
private struct HTTP2Exchange: Sendable {
    var request: HTTP2Request
    var response: EventLoopPromise<HTTP2Response>
}

/// Turns ``HTTP2Exchange``s into streams on one connection and matches the frames that come
/// back to them. Runs on the connection's event loop only.
private final class HTTP2ExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Exchange
    typealias OutboundOut = HTTP2Frame

    private struct Open {
        var response: EventLoopPromise<HTTP2Response>
        var timeout: Scheduled<Void>?
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    private let authority: String
    private let timeout: TimeAmount
    private let onUnusable: () -> Void
    private var nextStreamID = HTTP2StreamID(1)
    private var open: [HTTP2StreamID: Open] = [:]
    private var usable = true

    init(authority: String, timeout: TimeAmount, onUnusable: @escaping () -> Void) {
        self.authority = authority
        self.timeout = timeout
        self.onUnusable = onUnusable
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        promise?.succeed()
        guard usable, nextStreamID < HTTP2StreamID.maxID.advanced(by: -2) else {
            // Stream ids run out after about a billion requests: the next request gets a new connection.
            becomeUnusable()
            exchange.response.fail(HTTP2ClientError.connectionClosed)
            return
        }
        let streamID = nextStreamID
        nextStreamID = streamID.advanced(by: 2)
        let request = exchange.request
        var headers = HPACKHeaders()
        headers.reserveCapacity(4 + request.headers.count)
        headers.add(name: ":method", value: request.method)
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        headers.add(name: ":path", value: request.path)
        headers.add(contentsOf: request.headers)
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let timeout = context.eventLoop.scheduleTask(in: self.timeout) {
            loopBound.value.fail(streamID, HTTP2ClientError.timedOut, reset: true)
        }
        open[streamID] = Open(response: exchange.response, timeout: timeout)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { error in loopBound.value.fail(streamID, error, reset: false) }
        let body = request.body.flatMap { $0.readableBytes > 0 ? $0 : nil }
        let headersFrame = HTTP2Frame(
            streamID: streamID, payload: .headers(.init(headers: headers, endStream: body == nil)))
        if let body {
            context.write(wrapOutboundOut(headersFrame), promise: nil)
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
                promise: written)
        } else {
            context.write(wrapOutboundOut(headersFrame), promise: written)
        }
    }

    /// The context, for resetting a stream from a timer (the handler lives on one event loop).
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard var stream = open[frame.streamID] else { return }
            if let status = headers.headers.first(name: ":status").flatMap({ Int($0) }) {
                // 1xx answers are informational; the real one follows.
                if status < 200 { return }
                stream.status = status
                stream.headers = headers.headers
            }
            open[frame.streamID] = stream
            if headers.endStream { complete(frame.streamID) }
        case .data(let data):
            guard var stream = open[frame.streamID] else { return }
            if case .byteBuffer(var bytes) = data.data {
                if stream.body == nil {
                    stream.body = bytes
                } else {
                    stream.body!.writeBuffer(&bytes)
                }
            }
            open[frame.streamID] = stream
            if data.endStream { complete(frame.streamID) }
        case .rstStream(let code):
            fail(frame.streamID, HTTP2ClientError.streamReset(code), reset: false)
        case .goAway(let lastStreamID, _, _):
            becomeUnusable()
            for streamID in open.keys where streamID > lastStreamID {
                fail(streamID, HTTP2ClientError.refusedByGoAway, reset: false)
            }
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let update = HTTP2ConnectionWindow.update(after: event) {
            context.writeAndFlush(wrapOutboundOut(update), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        becomeUnusable()
        for streamID in Array(open.keys) {
            fail(streamID, HTTP2ClientError.connectionClosed, reset: false)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            fail(streamError.streamID, streamError.baseError, reset: false)
            return
        }
        becomeUnusable()
        for streamID in Array(open.keys) {
            fail(streamID, error, reset: false)
        }
        context.close(promise: nil)
    }

    private func complete(_ streamID: HTTP2StreamID) {
        guard let stream = open.removeValue(forKey: streamID) else { return }
        stream.timeout?.cancel()
        guard let status = stream.status else {
            stream.response.fail(HTTP2ClientError.streamReset(.protocolError))
            return
        }
        stream.response.succeed(
            HTTP2Response(status: status, headers: stream.headers, body: stream.body ?? ByteBuffer()))
    }

    private func fail(_ streamID: HTTP2StreamID, _ error: any Error, reset: Bool) {
        guard let stream = open.removeValue(forKey: streamID) else { return }
        stream.timeout?.cancel()
        stream.response.fail(error)
        if reset, let context {
            context.writeAndFlush(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        }
    }

    private func becomeUnusable() {
        guard usable else { return }
        usable = false
        onUnusable()
    }
}
