import Foundation
import HummingbirdWSClient
import NotifyCore
import NotifySinks
import Synchronization
import Testing

/// A phone's app on the in-app socket: records the command ids it receives and acknowledges
/// them (or not, to play a slow acknowledger).
final class TestDevice: Sendable {
    let received = Mutex<[String]>([])
    private let acknowledges: Bool
    private let stopSignal = AsyncStream<Void>.makeStream()

    init(acknowledges: Bool = true) {
        self.acknowledges = acknowledges
    }

    /// Connects with `token` and stays until ``stop()``; throws if the gateway refuses.
    func run(port: Int, token: String) async throws {
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)\(InAppGateway.path)",
            configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]),
            logger: testLogger
        ) { inbound, outbound, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message,
                              let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                              let id = object["id"] as? String
                        else { continue }
                        self.received.withLock { $0.append(id) }
                        if self.acknowledges { try await outbound.write(.text("{\"ack\":\"\(id)\"}")) }
                    }
                }
                group.addTask { for await _ in self.stopSignal.stream {} }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    func stop() {
        stopSignal.continuation.finish()
    }
}

@Suite struct InAppGatewayTests {
    let secret = Secret(bytes: Array("in-app shared secret".utf8), origin: "test")

    func token(user: String, device: String, expiresIn: TimeInterval = 600, secret: [UInt8]? = nil) -> String {
        JSONWebToken.hs256(
            claims: ["sub": .string(user), "did": .string(device), "exp": .number(Date().timeIntervalSince1970 + expiresIn)],
            secret: secret ?? self.secret.bytes
        )
    }

    /// Runs a gateway with one device connected as `token` while `body` runs.
    func withConnectedDevice(
        _ device: TestDevice, token: String, user: String = "u1", deviceId: String = "d1",
        ackTimeout: Duration = .seconds(5), _ body: (InAppSink) async throws -> Void
    ) async throws {
        let gateway = InAppGateway(secret: secret, logger: testLogger)
        let sink = InAppSink(gateway: gateway, ackTimeout: ackTimeout)
        try await gateway.serve(host: "127.0.0.1", port: 0) { port in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await device.run(port: port, token: token) }
                while !gateway.isConnected(userId: user, deviceId: deviceId) {
                    try await Task.sleep(for: .milliseconds(10))
                }
                do {
                    try await body(sink)
                    device.stop()
                    try await group.waitForAll()
                } catch {
                    device.stop()
                    group.cancelAll()
                    throw error
                }
            }
        }
    }

    @Test func deviceReceivesItsLocalCommandsInOrderAndAcknowledges() async throws {
        let device = TestDevice()
        try await withConnectedDevice(device, token: token(user: "u1", device: "d1")) { sink in
            for id in ["c1", "c2", "c3"] {
                #expect(await sink.deliver(delivery(makeCommand(id: id, path: .local))) == .delivered)
            }
        }
        #expect(device.received.withLock { $0 } == ["c1", "c2", "c3"])
    }

    @Test func anotherDevicesTokenGetsNothingOfThisDevice() async throws {
        let other = TestDevice()
        try await withConnectedDevice(other, token: token(user: "u1", device: "d2"), deviceId: "d2") { sink in
            let result = await sink.deliver(delivery(makeCommand(id: "c1", userId: "u1", deviceId: "d1", path: .local)))
            #expect(result == .undeliverableLocal(reason: "not-connected"))
            // One of its own, acknowledged: on the one ordered socket, c1 would have come before it.
            let own = await sink.deliver(delivery(makeCommand(id: "c2", userId: "u1", deviceId: "d2", path: .local)))
            #expect(own == .delivered)
        }
        #expect(other.received.withLock { $0 } == ["c2"])
    }

    @Test func slowAcknowledgerMakesTheCommandUndeliverableLocally() async throws {
        let device = TestDevice(acknowledges: false)
        try await withConnectedDevice(device, token: token(user: "u1", device: "d1"), ackTimeout: .milliseconds(200)) { sink in
            let result = await sink.deliver(delivery(makeCommand(id: "c1", path: .local)))
            #expect(result == .undeliverableLocal(reason: "ack-timeout"))
            // It was sent before the wait for the acknowledgement ran out; a busy machine may read it later.
            let deadline = ContinuousClock.now + .seconds(5)
            while device.received.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(device.received.withLock { $0 } == ["c1"])
    }

    @Test(arguments: ["forged", "expired", "unsigned", "no-device"])
    func badTokensAreRefused(_ kind: String) async throws {
        let bad: String
        switch kind {
        case "forged": bad = token(user: "u1", device: "d1", secret: Array("another secret".utf8))
        case "expired": bad = token(user: "u1", device: "d1", expiresIn: -5)
        case "unsigned":
            let claims = JSONWebToken.base64URL(Array(#"{"did":"d1","exp":9999999999,"sub":"u1"}"#.utf8))
            bad = JSONWebToken.base64URL(Array(#"{"alg":"none"}"#.utf8)) + "." + claims + "."
        default:
            bad = JSONWebToken.hs256(claims: ["sub": .string("u1"), "exp": .number(Date().timeIntervalSince1970 + 60)], secret: secret.bytes)
        }
        let gateway = InAppGateway(secret: secret, logger: testLogger)
        try await gateway.serve(host: "127.0.0.1", port: 0) { port in
            await #expect(throws: WebSocketClientError.webSocketUpgradeFailed) {
                try await TestDevice().run(port: port, token: bad)
            }
            #expect(!gateway.isConnected(userId: "u1", deviceId: "d1"))
        }
    }
}
