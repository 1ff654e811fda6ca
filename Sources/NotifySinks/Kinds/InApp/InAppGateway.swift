import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NotifyCore
import Synchronization

/// The in-app gateway: a WebSocket endpoint at `/v1/stream` through which a foreground app
/// receives its device's `local` commands.
///
/// A client connects with `Authorization: Bearer <JWT>`: HS256 with one of the gateway's secrets
/// (the header's `kid` names it; a token without `kid` takes the secret without one), claims `sub`
/// (user id), `did` (device id) and `exp`, and optionally `nbf` and `iat`, checked within a clock
/// leeway (``InAppTokenSecrets``, ``InAppTokenClaims``). A request for `/v1/stream` (a WebSocket
/// upgrade or not) whose token is refused gets `401` with
/// `WWW-Authenticate: Bearer realm="notify", error="invalid_token", error_description="<reason>: …"`
/// (``TokenRefusal``), and its connection is closed. A connected device receives one command JSON
/// per text frame, in order, and answers each with `{"ack": "<command id>"}`. A newer connection
/// of the same device replaces the older.
public final class InAppGateway: Sendable {
    /// The path clients connect to.
    public static let path = "/v1/stream"

    private let tokens: InAppTokenVerifier
    private let logger: Logger
    private let connections = Mutex<[DeviceAddress: DeviceConnection]>([:])
    private let onConnectionCount: @Sendable (Int) -> Void

    /// - Parameters:
    ///   - secrets: the HS256 secrets the app's bearer tokens are signed with.
    ///   - clockLeeway: how far `exp`, `nbf` and `iat` may be off this host's clock.
    ///   - onConnectionCount: hears the number of connected devices whenever it changes (for metrics).
    public init(
        secrets: InAppTokenSecrets, clockLeeway: Duration = .seconds(30), logger: Logger,
        onConnectionCount: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        tokens = InAppTokenVerifier(secrets: secrets, clockLeeway: clockLeeway, logger: logger)
        self.logger = logger
        self.onConnectionCount = onConnectionCount
    }

    /// Reads the secrets (throwing ``SinkConfigurationError`` if they can't be used), then serves the
    /// gateway on `host:port` while `body` runs, reading the secrets directory again meanwhile;
    /// `body` gets the bound port.
    public func serve<Value: Sendable>(host: String, port: Int, body: (Int) async throws -> Value) async throws -> Value
    {
        try await tokens.load()
        return try await withThrowingTaskGroup(of: Void.self) { reloads in
            reloads.addTask { await self.tokens.reloadUntilCancelled() }
            defer { reloads.cancelAll() }
            return try await serveWithSecretsLoaded(host: host, port: port, body: body)
        }
    }

    private func serveWithSecretsLoaded<Value: Sendable>(host: String, port: Int, body: (Int) async throws -> Value)
        async throws -> Value
    {
        try await withRunningServer(logger: logger) { onServerRunning in
            let router = Router(context: BasicWebSocketRequestContext.self)
            router.middlewares.add(TracingMiddleware())
            router.ws(RouterPath(stringLiteral: Self.path)) { request, _ in
                _ = try await self.authenticate(request)
                return .upgrade([:])
            } onUpgrade: { inbound, outbound, context in
                let device = try await self.authenticate(context.request)
                try await self.handle(device: device, inbound: inbound, outbound: outbound)
            }
            let webSocketResponder = router.buildResponder()
            let server = HTTPServerBuilder { responder in
                GatewayChannel(
                    upgrade: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder,
                        configuration: HTTP1WebSocketUpgradeChannel.Configuration()),
                    refusal: { head in await self.refusal(of: head) })
            }
            return Application(
                router: Router(),
                server: server,
                configuration: .init(address: .hostname(host, port: port)),
                onServerRunning: onServerRunning,
                logger: logger
            )
        } body: { port in
            try await body(port)
        }
    }

    /// Sends `json` (the command `commandId`) to `device` and waits up to `ackTimeout` for its
    /// acknowledgement.
    func send(_ json: [UInt8], commandId: String, to device: DeviceAddress, ackTimeout: Duration) async
        -> DeliveryResult
    {
        guard let connection = connections.withLock({ $0[device] }) else {
            return .undeliverableLocal(reason: "not-connected")
        }
        return await connection.send(json, commandId: commandId, ackTimeout: ackTimeout)
    }

    /// Whether the device has an open connection.
    public func isConnected(userId: String, deviceId: String) -> Bool {
        connections.withLock { $0[DeviceAddress(userId: userId, deviceId: deviceId)] != nil }
    }

    /// The device named by the request's bearer token, or 401.
    private func authenticate(_ request: Request) async throws -> DeviceAddress {
        switch await device(authorization: request.headers[.authorization]) {
        case .success(let device): return device
        case .failure: throw HTTPError(.unauthorized)
        }
    }

    /// Why a request for the gateway's path may not go on, or `nil` (any other path goes on: 404).
    private func refusal(of head: HTTPRequestHead) async -> String? {
        guard
            head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first == Substring(Self.path)
        else {
            return nil
        }
        if case .failure(let refusal) = await device(authorization: head.headers.first(name: "authorization")) {
            logger.debug("in-app token refused", metadata: ["reason": "\(refusal.reason)"])
            return refusal.description
        }
        return nil
    }

    /// The device a bearer `Authorization` value names, or why it names none.
    private func device(authorization: String?) async -> Result<DeviceAddress, TokenRefusal> {
        await tokens.verify(authorization: authorization).map { DeviceAddress(userId: $0.sub.value, deviceId: $0.did) }
    }

    private func handle(device: DeviceAddress, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter)
        async throws
    {
        let connection = DeviceConnection(outbound: outbound)
        let (replaced, count) = connections.withLock { ($0.updateValue(connection, forKey: device), $0.count) }
        onConnectionCount(count)
        replaced?.close(reason: "replaced")
        logger.debug("device connected", metadata: ["user": "\(device.userId)", "device": "\(device.deviceId)"])
        defer {
            let count = connections.withLock { connections in
                if connections[device] === connection { connections[device] = nil }
                return connections.count
            }
            onConnectionCount(count)
            connection.close(reason: "disconnected")
        }
        for try await message in inbound.messages(maxSize: 64 * 1024) {
            guard case .text(let text) = message,
                let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                let acknowledged = object["ack"] as? String
            else { continue }
            connection.acknowledge(acknowledged)
        }
    }
}

/// A device as the gateway knows it: user id and device id.
struct DeviceAddress: Hashable, Sendable {
    var userId: String
    var deviceId: String
}

/// One open WebSocket of one device, with the acknowledgements it is waiting for.
final class DeviceConnection: Sendable {
    private let outbound: WebSocketOutboundWriter
    private let pending = Mutex<(waiters: [String: OneShot<DeliveryResult>], closed: String?)>(([:], nil))

    init(outbound: WebSocketOutboundWriter) {
        self.outbound = outbound
    }

    func send(_ json: [UInt8], commandId: String, ackTimeout: Duration) async -> DeliveryResult {
        let answer = OneShot<DeliveryResult>()
        let closed = pending.withLock { pending -> String? in
            if let closed = pending.closed { return closed }
            pending.waiters[commandId] = answer
            return nil
        }
        if let closed { return .undeliverableLocal(reason: closed) }
        do {
            try await outbound.write(.text(String(decoding: json, as: UTF8.self)))
        } catch {
            resolve(commandId, with: .undeliverableLocal(reason: "disconnected"))
        }
        return await withTaskGroup(of: Void.self) { timer in
            timer.addTask {
                try? await Task.sleep(for: ackTimeout)
                self.resolve(commandId, with: .undeliverableLocal(reason: "ack-timeout"))
            }
            let result = await answer.value()
            timer.cancelAll()
            return result
        }
    }

    func acknowledge(_ commandId: String) {
        resolve(commandId, with: .delivered)
    }

    func close(reason: String) {
        let waiters = pending.withLock { pending in
            pending.closed = reason
            defer { pending.waiters = [:] }
            return pending.waiters
        }
        for waiter in waiters.values { waiter.resolve(.undeliverableLocal(reason: reason)) }
    }

    private func resolve(_ commandId: String, with result: DeliveryResult) {
        let waiter = pending.withLock { $0.waiters.removeValue(forKey: commandId) }
        waiter?.resolve(result)
    }
}
