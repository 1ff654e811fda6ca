import Crypto
import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NotifyCore
import NotifySinks
import Synchronization

/// A loopback stand-in for APNs: HTTP/2 over TLS, `POST /3/device/<token>`, checking what Apple
/// checks: the provider token's ES256 signature against the key's public half, its `kid`, `iss`
/// and age; `apns-topic`, `apns-push-type`, `apns-priority`, `apns-id`; the payload's size and
/// JSON. Answers scripted per device token (410, 429 with Retry-After, 500, slow) come first.
///
/// Like APNs it speaks only HTTP/2 (ALPN `h2`) and serves many concurrent streams per
/// connection. It works on HTTP/2 frames directly, so that it stays far cheaper per request than
/// the sink it measures.
public final class APNsStandIn: Sendable {
    /// One accepted notification.
    public struct Notification: Sendable {
        public var token: String
        public var headers: [String: String]
        public var payload: [UInt8]
    }

    /// What it accepted, and the answers it is told to give (keyed by device token).
    public let ledger: StandInLedger<Notification>
    /// The key's public half, raw (swift-crypto's key type is not `Sendable`).
    private let publicKey: Data
    private let keyId: String
    private let teamId: String
    /// Provider tokens already verified (APNs providers reuse one token for up to an hour), and
    /// those to answer `ExpiredProviderToken` for, as if they had aged.
    private let providerTokenState = Mutex<(verified: Set<String>, expired: Set<String>)>(([], []))
    /// Connections accepted so far, and the most requests one connection had open at once.
    private let traffic = Mutex<(connections: Int, mostOpenStreams: Int)>((0, 0))

    /// - Parameters:
    ///   - publicKey: the public half of the provider's `.p8` key.
    ///   - keepsRequests: `false` only counts accepted notifications (benchmarks).
    public init(publicKey: P256.Signing.PublicKey, keyId: String, teamId: String, keepsRequests: Bool = true) {
        self.publicKey = publicKey.rawRepresentation
        self.keyId = keyId
        self.teamId = teamId
        ledger = StandInLedger(keepsRequests: keepsRequests)
    }

    /// From now on, `token` (a provider token) is answered `403 ExpiredProviderToken`.
    public func expire(providerToken token: String) {
        providerTokenState.withLock { _ = $0.expired.insert(token) }
    }

    /// The provider tokens seen so far that verified.
    public var providerTokens: Set<String> { providerTokenState.withLock { $0.verified } }

    /// How many connections it accepted so far (APNs asks providers for a few, kept open).
    public var connectionCount: Int { traffic.withLock { $0.connections } }

    /// The most requests (HTTP/2 streams) one connection had under way at once: received and not
    /// yet answered.
    public var mostConcurrentStreams: Int { traffic.withLock { $0.mostOpenStreams } }

    /// Notes that a connection has `open` requests under way.
    fileprivate func noteOpenStreams(_ open: Int) {
        traffic.withLock { $0.mostOpenStreams = max($0.mostOpenStreams, open) }
    }

    /// Serves on 127.0.0.1 (a free port) while `body` runs; then closes the listener and every
    /// connection, also when `body` throws.
    public func serve<Value: Sendable>(
        tls authority: TestCertificateAuthority, logger: Logger, body: (Int) async throws -> Value
    ) async throws -> Value {
        var tls = try authority.serverTLSConfiguration()
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let connections = OpenConnections()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                connections.add(channel)
                self.traffic.withLock { $0.connections += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: context))
                    try sync.addHandler(
                        NIOHTTP2Handler(
                            mode: .server,
                            initialSettings: [
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                                HTTP2Setting(
                                    parameter: .maxHeaderListSize, value: HPACKDecoder.defaultMaxHeaderListSize),
                            ]))
                    try sync.addHandler(APNsStreamHandler(standIn: self))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        func stop() async {
            try? await listener.close()
            await connections.closeAll()
        }
        do {
            let result = try await body(listener.localAddress?.port ?? 0)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// What to answer a complete request, and after how long.
    fileprivate func answer(path: String?, method: String?, headers: HPACKHeaders, payload: ByteBuffer) -> StandInReply
    {
        let prefix = "/3/device/"
        guard method == "POST", let path, path.hasPrefix(prefix) else { return .now(status: 404, reason: "BadPath") }
        let token = String(path.dropFirst(prefix.count))
        if let refusal = checkAuthorization(headers.first(name: "authorization")) {
            return .now(status: 403, reason: refusal)
        }
        if let refusal = checkHeaders(headers) {
            return .now(status: 400, reason: refusal)
        }
        guard payload.readableBytes <= APNsSink.maximumPayloadBytes else {
            return .now(status: 413, reason: "PayloadTooLarge")
        }
        guard case .object? = try? CoreJSON.parse(payload.readableBytesView) else {
            return .now(status: 400, reason: "BadPayload")
        }
        let accept = { @Sendable in
            var fields: [String: String] = [:]
            if self.ledger.keepsRequests {
                for field in headers where field.name.hasPrefix("apns-") {
                    fields[field.name] = field.value
                }
            }
            self.ledger.accept(
                Notification(
                    token: token, headers: fields, payload: self.ledger.keepsRequests ? Array(buffer: payload) : []))
        }
        switch ledger.nextAnswer(for: token) {
        case .error(let status, let reason, let retryAfter)?:
            return .now(status: status, reason: reason, retryAfterSeconds: retryAfter)
        case .slow(let delay)?:
            return StandInReply(status: 200, delay: delay, before: accept)
        case .stall(let duration)?:
            return StandInReply(status: 503, reason: "ServiceUnavailable", delay: duration)
        case .acceptThenHold(let duration)?:
            accept()
            return StandInReply(status: 200, delay: duration)
        case nil:
            accept()
            return .now(status: 200)
        }
    }

    /// `nil` if the provider token is good, else Apple's reason.
    private func checkAuthorization(_ authorization: String?) -> String? {
        guard let authorization, authorization.utf8.count > 7,
            authorization.utf8.prefix(7).elementsEqual("bearer ".utf8, by: { $0 | 0x20 == $1 })
        else { return "MissingProviderToken" }
        let token = String(authorization.dropFirst(7))
        let known: String?? = providerTokenState.withLock { state in
            if state.expired.contains(token) { return "ExpiredProviderToken" }
            if state.verified.contains(token) { return .some(nil) }
            return nil
        }
        if let known { return known }
        guard let parts = try? JSONWebToken.parse(token),
            parts.header["alg"] == .string("ES256"),
            parts.header["kid"] == .string(keyId),
            parts.claims["iss"] == .string(teamId),
            case .number(let issuedAt)? = parts.claims["iat"],
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature),
            let key = try? P256.Signing.PublicKey(rawRepresentation: publicKey),
            key.isValidSignature(signature, for: Array(parts.signingInput.utf8))
        else { return "InvalidProviderToken" }
        guard abs(Date().timeIntervalSince1970 - issuedAt) < 3600 else { return "ExpiredProviderToken" }
        providerTokenState.withLock { _ = $0.verified.insert(token) }
        return nil
    }

    /// `nil` if the request headers are acceptable, else Apple's reason.
    private func checkHeaders(_ headers: HPACKHeaders) -> String? {
        func header(_ name: String) -> String? { headers.first(name: name) }
        guard let topic = header("apns-topic"), !topic.isEmpty else { return "MissingTopic" }
        let type = header("apns-push-type")
        if let type,
            ![
                "alert", "background", "voip", "complication", "fileprovider", "mdm", "liveactivity", "location",
                "pushtotalk",
            ].contains(type)
        {
            return "InvalidPushType"
        }
        let priority = header("apns-priority")
        if let priority, !["1", "5", "10"].contains(priority) { return "BadPriority" }
        if type == "background", priority == "10" { return "BadPriority" }
        if let id = header("apns-id"), UUID(uuidString: id) == nil { return "BadMessageId" }
        if let collapse = header("apns-collapse-id"), collapse.utf8.count > 64 { return "BadCollapseId" }
        return nil
    }
}

/// The stand-in's answer to one request.
private struct StandInReply: Sendable {
    var status: Int
    var reason: String?
    var retryAfterSeconds: Int?
    /// How long to hold the answer back.
    var delay: Duration?
    /// Runs just before the answer goes out (a slow request is accepted then).
    var before: (@Sendable () -> Void)?

    static func now(status: Int, reason: String? = nil, retryAfterSeconds: Int? = nil) -> StandInReply {
        StandInReply(status: status, reason: reason, retryAfterSeconds: retryAfterSeconds)
    }
}

/// Collects each stream's request (HEADERS, DATA...) and writes the stand-in's answer on it.
private final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let standIn: APNsStandIn
    private var requests: [HTTP2StreamID: (headers: HPACKHeaders, body: ByteBuffer)] = [:]
    /// Streams whose request arrived (or is arriving) and whose answer has not gone out.
    private var openStreams: Set<HTTP2StreamID> = []

    init(standIn: APNsStandIn) {
        self.standIn = standIn
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            requests[frame.streamID] = (headers.headers, ByteBuffer())
            openStreams.insert(frame.streamID)
            standIn.noteOpenStreams(openStreams.count)
            if headers.endStream { respond(to: frame.streamID, context: context) }
        case .data(let data):
            guard case .byteBuffer(var bytes) = data.data, requests[frame.streamID] != nil else { return }
            requests[frame.streamID]!.body.writeBuffer(&bytes)
            if data.endStream { respond(to: frame.streamID, context: context) }
        case .rstStream:
            requests[frame.streamID] = nil
            openStreams.remove(frame.streamID)
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Answers to everything read in one go leave in one write.
        context.flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let update = HTTP2ConnectionWindow.update(after: event) {
            context.writeAndFlush(wrapOutboundOut(update), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Stream errors are answered by the HTTP/2 handler; anything else ends the connection.
        if error is NIOHTTP2Errors.StreamError { return }
        context.close(promise: nil)
    }

    private func respond(to streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let request = requests.removeValue(forKey: streamID) else { return }
        let reply = standIn.answer(
            path: request.headers.first(name: ":path"), method: request.headers.first(name: ":method"),
            headers: request.headers, payload: request.body)
        guard let delay = reply.delay else {
            reply.before?()
            write(reply, on: streamID, context: context)
            return
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(
            in: .nanoseconds(delay.nanoseconds)
        ) {
            let (handler, context) = bound.value
            reply.before?()
            handler.write(reply, on: streamID, context: context)
            context.flush()
        }
    }

    private func write(_ reply: StandInReply, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        openStreams.remove(streamID)
        var headers: HPACKHeaders = [":status": String(reply.status)]
        guard let reason = reply.reason else {
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))),
                promise: nil)
            return
        }
        headers.add(name: "content-type", value: "application/json")
        if let seconds = reply.retryAfterSeconds { headers.add(name: "retry-after", value: String(seconds)) }
        let body = ByteBuffer(bytes: CoreJSON.encode(JSONValue.object(["reason": .string(reason)])))
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        context.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
            promise: nil)
    }
}

/// The connections a stand-in accepted, to close when it stops.
private final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { _ in
            self.channels.withLock { $0[id] = nil }
        }
    }

    func closeAll() async {
        for channel in channels.withLock({ Array($0.values) }) {
            try? await channel.close()
        }
    }
}
