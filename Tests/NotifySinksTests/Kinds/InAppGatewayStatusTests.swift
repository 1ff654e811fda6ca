import NIOCore
import NIOPosix
import NotifySinks
import Testing

/// What the gateway answers, on the wire, to requests it refuses.
@Suite struct InAppGatewayStatusTests {
    let secret = Secret(bytes: Array("in-app shared secret".utf8), origin: "test")

    /// Sends `request` (raw HTTP/1.1) to the gateway and returns everything it answers before it closes.
    func exchange(port: Int, _ request: String) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var answer = ""
            for try await chunk in inbound { answer += String(buffer: chunk) }
            return answer
        }
    }

    func upgrade(authorization: String?) -> String {
        "GET \(InAppGateway.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n"
    }

    @Test(arguments: [
        ("forged", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSIsImRpZCI6ImQxIn0.c2lnbmF0dXJl", "not signed by this gateway"),
        ("missing", nil, "a bearer token is required"),
        ("not bearer", "Basic dTE6cGFzc3dvcmQ=", "a bearer token is required"),
    ] as [(String, String?, String)])
    func refusedUpgradeAnswers401WithAChallenge(_ name: String, _ authorization: String?, _ reason: String) async throws {
        let gateway = InAppGateway(secret: secret, logger: testLogger)
        try await gateway.serve(host: "127.0.0.1", port: 0) { port in
            let answer = try await exchange(port: port, upgrade(authorization: authorization))
            #expect(answer.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(name): \(answer)")
            let challenge = answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("www-authenticate:") }
            #expect(challenge?.contains("Bearer realm=\"notify\", error=\"invalid_token\"") == true, "\(name): \(answer)")
            #expect(challenge?.contains(reason) == true, "\(name): \(answer)")
        }
    }

    @Test func plainRequestWithoutATokenAnswers401() async throws {
        let gateway = InAppGateway(secret: secret, logger: testLogger)
        try await gateway.serve(host: "127.0.0.1", port: 0) { port in
            let answer = try await exchange(port: port, "GET \(InAppGateway.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(answer)")
            #expect(answer.lowercased().contains("www-authenticate: bearer realm=\"notify\""))
        }
    }
}
