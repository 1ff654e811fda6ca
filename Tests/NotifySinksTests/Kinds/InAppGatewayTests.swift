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

/// A token for `user`'s `device`, HS256 with `secret`, naming `kid` (none if `nil`).
func inAppToken(
    user: String = "u1", device: String = "d1", expiresIn: TimeInterval = 600, secret: [UInt8] = inAppSecret.bytes,
    kid: String? = nil
) async throws -> String {
    try await InAppTokenClaims(userId: user, deviceId: device, expires: Date().addingTimeInterval(expiresIn)).signed(
        secret: secret, kid: kid)
}

/// The tests' in-app secret without kid (HS256 wants at least 32 bytes).
let inAppSecret = Secret(bytes: Array("in-app shared secret, 32 bytes or more".utf8), origin: "test")

@Suite struct InAppGatewayTests {
    let secret = inAppSecret

    func token(user: String, device: String) async throws -> String {
        try await inAppToken(user: user, device: device)
    }

    /// Runs a gateway with one device connected as `token` while `body` runs.
    func withConnectedDevice(
        _ device: TestDevice, token: String, user: String = "u1", deviceId: String = "d1",
        ackTimeout: Duration = .seconds(5), _ body: (InAppSink) async throws -> Void
    ) async throws {
        let gateway = InAppGateway(secrets: InAppTokenSecrets(withoutKid: secret), logger: testLogger)
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
        try await withConnectedDevice(device, token: try await token(user: "u1", device: "d1")) { sink in
            for id in ["c1", "c2", "c3"] {
                #expect(await sink.deliver(delivery(makeCommand(id: id, path: .local))) == .delivered)
            }
        }
        #expect(device.received.withLock { $0 } == ["c1", "c2", "c3"])
    }

    @Test func anotherDevicesTokenGetsNothingOfThisDevice() async throws {
        let other = TestDevice()
        try await withConnectedDevice(other, token: try await token(user: "u1", device: "d2"), deviceId: "d2") { sink in
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
        try await withConnectedDevice(
            device, token: try await token(user: "u1", device: "d1"), ackTimeout: .milliseconds(200)
        ) { sink in
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
}
