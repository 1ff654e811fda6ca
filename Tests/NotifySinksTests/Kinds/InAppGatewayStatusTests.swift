import Foundation
import HummingbirdWSClient
import JWTKit
import NIOCore
import NIOPosix
import NotifySinks
import Testing

/// Sends `request` (raw HTTP/1.1) to the gateway at `port` and returns everything it answers before
/// it closes; throws if it has not closed within 10 s (an accepted upgrade stays open).
func exchange(port: Int, _ request: String) async throws -> String {
    try await withThrowingTaskGroup(of: String.self) { group in
        group.addTask {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            return try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: request))
                var answer = ""
                for try await chunk in inbound { answer += String(buffer: chunk) }
                return answer
            }
        }
        group.addTask {
            try await Task.sleep(for: .seconds(10))
            throw SinkConfigurationError("the gateway did not answer and close within 10 s")
        }
        defer { group.cancelAll() }
        return try await group.next() ?? ""
    }
}

/// A WebSocket upgrade request for the gateway's path, with `authorization` if given.
func upgradeRequest(authorization: String?) -> String {
    "GET \(InAppGateway.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n"
}

/// The `WWW-Authenticate` line of a `401` answer to an upgrade with `authorization`, or `nil` if the answer is not `401`.
func challenge(port: Int, authorization: String?) async throws -> String? {
    let answer = try await exchange(port: port, upgradeRequest(authorization: authorization))
    guard answer.hasPrefix("HTTP/1.1 401 Unauthorized\r\n") else { return nil }
    return answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("www-authenticate:") }.map(String.init)
}

/// Claims without `did`: a token that is signed but not one of the gateway's.
private struct ClaimsWithoutDevice: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// What the gateway answers, on the wire, to requests it refuses, and to tokens near the edges of their times.
@Suite struct InAppGatewayStatusTests {
    let kidSecret = Array("the secret of kid k1, 32 bytes or more".utf8)

    /// Serves a gateway with the secret without kid and, in a directory, `k1`'s, while `body` runs.
    func withGateway(clockLeeway: Duration = .seconds(30), _ body: (InAppGateway, Int) async throws -> Void)
        async throws
    {
        let file = try temporaryFile("k1", contents: kidSecret)
        let directory = (file as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = InAppGateway(
            secrets: InAppTokenSecrets(withoutKid: inAppSecret, directory: directory), clockLeeway: clockLeeway,
            logger: testLogger)
        try await gateway.serve(host: "127.0.0.1", port: 0) { port in try await body(gateway, port) }
    }

    /// The `Authorization` value of each refusal reason's example.
    static func authorization(_ example: String) async throws -> String? {
        let now = Date()
        switch example {
        case "no header": return nil
        case "not bearer": return "Basic dTE6cGFzc3dvcmQ="
        case "empty bearer": return "Bearer "
        case "not a JWT": return "Bearer not-a-token"
        case "no did":
            let keys = await JWTKeyCollection().add(hmac: HMACKey(from: inAppSecret.bytes), digestAlgorithm: .sha256)
            return "Bearer "
                + (try await keys.sign(ClaimsWithoutDevice(sub: "u1", exp: .init(value: now.addingTimeInterval(600)))))
        case "unknown kid":
            return "Bearer "
                + (try await inAppToken(secret: Array("a secret of kid k9, 32 bytes or more".utf8), kid: "k9"))
        case "forged":
            return "Bearer " + (try await inAppToken(secret: Array("not this gateway's secret, but 32 bytes".utf8)))
        case "forged with kid": return "Bearer " + (try await inAppToken(secret: inAppSecret.bytes, kid: "k1"))
        case "unsigned":
            let claims = JSONWebToken.base64URL(Array(#"{"did":"d1","exp":9999999999,"sub":"u1"}"#.utf8))
            return "Bearer " + JSONWebToken.base64URL(Array(#"{"alg":"none"}"#.utf8)) + "." + claims + "."
        case "expired": return "Bearer " + (try await inAppToken(expiresIn: -120))
        case "not before":
            let claims = InAppTokenClaims(
                userId: "u1", deviceId: "d1", expires: now.addingTimeInterval(600),
                notBefore: now.addingTimeInterval(120))
            return "Bearer " + (try await claims.signed(secret: inAppSecret.bytes))
        case "issued later":
            let claims = InAppTokenClaims(
                userId: "u1", deviceId: "d1", expires: now.addingTimeInterval(600),
                issuedAt: now.addingTimeInterval(120))
            return "Bearer " + (try await claims.signed(secret: inAppSecret.bytes))
        default: preconditionFailure("no example \(example)")
        }
    }

    @Test(arguments: [
        ("no header", "missing"), ("not bearer", "missing"), ("empty bearer", "missing"),
        ("not a JWT", "malformed"), ("no did", "malformed"),
        ("unknown kid", "unknown kid"),
        ("forged", "bad signature"), ("forged with kid", "bad signature"), ("unsigned", "bad signature"),
        ("expired", "expired"),
        ("not before", "not yet valid"), ("issued later", "not yet valid"),
    ])
    func refusedUpgradeAnswers401WithItsReason(_ example: String, _ reason: String) async throws {
        let authorization = try await Self.authorization(example)
        try await withGateway { gateway, port in
            let line = try await challenge(port: port, authorization: authorization)
            #expect(
                line?.contains(#"Bearer realm="notify", error="invalid_token", error_description=""#) == true,
                "\(example): \(line ?? "not 401")")
            #expect(line?.contains(#"error_description="\#(reason): "#) == true, "\(example): \(line ?? "not 401")")
            // A real WebSocket client is refused too.
            let token = authorization.map { String($0.drop { $0 != " " }.dropFirst()) } ?? ""
            let connected = try await connects(gateway, port: port, token: token)
            #expect(!connected, "\(example)")
        }
    }

    @Test func plainRequestWithoutATokenAnswers401() async throws {
        try await withGateway { _, port in
            let answer = try await exchange(
                port: port, "GET \(InAppGateway.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(answer)")
            #expect(answer.lowercased().contains("www-authenticate: bearer realm=\"notify\""))
            #expect(answer.contains("error_description=\"missing: "))
        }
    }

    @Test func tokensWithAndWithoutKidConnect() async throws {
        try await withGateway { gateway, port in
            let withoutKid = try await connects(gateway, port: port, token: try await inAppToken(device: "d1"))
            let withKid = try await connects(
                gateway, port: port, token: try await inAppToken(device: "d2", secret: kidSecret, kid: "k1"),
                deviceId: "d2")
            #expect(withoutKid && withKid)
        }
    }

    /// Times off by less than the leeway are accepted; by more, refused. Each token's times are taken
    /// from the moment it is sent, so a slow machine cannot move them across the edge.
    @Test func clockLeewayAppliesToExpNbfAndIat() async throws {
        let offByWithinLeeway: [@Sendable (Date) -> InAppTokenClaims] = [
            { now in InAppTokenClaims(userId: "u1", deviceId: "d1", expires: now.addingTimeInterval(-20)) },
            { now in
                InAppTokenClaims(
                    userId: "u1", deviceId: "d1", expires: now.addingTimeInterval(600),
                    notBefore: now.addingTimeInterval(20))
            },
            { now in
                InAppTokenClaims(
                    userId: "u1", deviceId: "d1", expires: now.addingTimeInterval(600),
                    issuedAt: now.addingTimeInterval(20))
            },
        ]
        for (leeway, accepted) in [(Duration.seconds(60), true), (.zero, false)] {
            try await withGateway(clockLeeway: leeway) { gateway, port in
                for makeClaims in offByWithinLeeway {
                    let claims = makeClaims(Date())
                    let token = try await claims.signed(secret: inAppSecret.bytes)
                    let connected = try await connects(gateway, port: port, token: token)
                    #expect(connected == accepted, "leeway \(leeway): \(claims)")
                    if !accepted {
                        let line = try await challenge(
                            port: port,
                            authorization: "Bearer " + (try await makeClaims(Date()).signed(secret: inAppSecret.bytes)))
                        #expect(
                            line?.contains("expired: ") == true || line?.contains("not yet valid: ") == true,
                            "\(line ?? "not 401")")
                    }
                }
            }
        }
    }
}

/// Waits (up to 10 s) until `deviceId` of `u1` is connected to `gateway`.
func waitUntilConnected(_ gateway: InAppGateway, deviceId: String) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !gateway.isConnected(userId: "u1", deviceId: deviceId) {
        guard ContinuousClock.now < deadline else {
            throw SinkConfigurationError("\(deviceId) did not connect within 10 s")
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Whether a WebSocket client with `token` gets connected as u1's `deviceId` (it leaves right after),
/// or is refused.
func connects(_ gateway: InAppGateway, port: Int, token: String, deviceId: String = "d1") async throws -> Bool {
    let client = TestDevice()
    let connected = try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            do {
                try await client.run(port: port, token: token)
                return true
            } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
                return false
            }
        }
        group.addTask {
            try await waitUntilConnected(gateway, deviceId: deviceId)
            return true
        }
        let connected = try await group.next() ?? false
        client.stop()
        group.cancelAll()
        return connected
    }
    // Gone again before the next probe of the same device.
    let deadline = ContinuousClock.now + .seconds(10)
    while gateway.isConnected(userId: "u1", deviceId: deviceId), ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
    }
    return connected
}
