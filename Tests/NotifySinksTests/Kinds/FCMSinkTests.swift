import Foundation
import NotifyCore
import NotifySinkStandIns
import NotifySinks
import Testing
import _CryptoExtras

@Suite struct FCMSinkTests {
    /// A service-account key (RSA 2048) shared by the suite: generating one takes a moment.
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    func withFCM(_ body: (FCMStandIn, FCMSink) async throws -> Void) async throws {
        try await withCertificateAuthority { authority in
            let fcm = FCMStandIn(
                projectId: "chat-test", clientEmail: "notify@chat-test.iam.gserviceaccount.com",
                publicKey: Self.key.publicKey)
            try await fcm.serve(tls: authority, logger: testLogger) { port in
                let account = try ServiceAccount(
                    json: Secret(
                        bytes: try fcm.serviceAccountJSON(privateKeyPEM: Self.key.pemRepresentation, port: port),
                        origin: "test"))
                #expect(account.projectId == "chat-test")
                let sink = try FCMSink(
                    endpoint: "https://127.0.0.1:\(port)", account: account,
                    transport: HTTPTransportConfiguration(caFile: authority.caFile))
                try await using(sink) { sink in try await body(fcm, sink) }
            }
        }
    }

    @Test func sendsWithOneCachedAccessToken() async throws {
        try await withFCM { fcm, sink in
            let first = makeCommand(id: "c1", provider: .fcm, token: "tok-1")
            #expect(await sink.deliver(delivery(first)) == .delivered)
            #expect(await sink.deliver(delivery(makeCommand(id: "c2", provider: .fcm, token: "tok-2"))) == .delivered)
            #expect(fcm.tokenExchanges == 1)
            let received = fcm.ledger.received
            #expect(received.map(\.token) == ["tok-1", "tok-2"])
            let body = try JSONDecoder().decode(FCMRendering.self, from: Data(received[0].body))
            #expect(body == first.fcm)
        }
    }

    @Test func revokedAccessTokenIsExchangedAgain() async throws {
        try await withFCM { fcm, sink in
            #expect(await sink.deliver(delivery(makeCommand(id: "c1", provider: .fcm, token: "tok-1"))) == .delivered)
            fcm.revokeAccessTokens()
            #expect(await sink.deliver(delivery(makeCommand(id: "c2", provider: .fcm, token: "tok-2"))) == .delivered)
            #expect(fcm.tokenExchanges == 2)
        }
    }

    @Test func errorCodesAreClassified() async throws {
        try await withFCM { fcm, sink in
            fcm.ledger.script("gone", [.error(status: 404, reason: "UNREGISTERED")])
            fcm.ledger.script("busy", [.error(status: 429, reason: "QUOTA_EXCEEDED", retryAfterSeconds: 9)])
            fcm.ledger.script("down", [.error(status: 503, reason: "UNAVAILABLE")])
            fcm.ledger.script("oops", [.error(status: 500, reason: "INTERNAL")])
            fcm.ledger.script("bad", [.error(status: 400, reason: "INVALID_ARGUMENT")])
            fcm.ledger.script("other", [.error(status: 403, reason: "SENDER_ID_MISMATCH")])
            func result(_ token: String) async -> DeliveryResult {
                await sink.deliver(delivery(makeCommand(id: "c-\(token)", provider: .fcm, token: token)))
            }
            #expect(await result("gone") == .tokenInvalid(reason: "UNREGISTERED", token: "gone"))
            #expect(await result("busy") == .retryable(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(9)))
            #expect(await result("down") == .retryable(reason: "UNAVAILABLE"))
            #expect(await result("oops") == .retryable(reason: "INTERNAL"))
            #expect(await result("bad") == .rejected(reason: "INVALID_ARGUMENT"))
            #expect(await result("other") == .rejected(reason: "SENDER_ID_MISMATCH"))
            #expect(fcm.ledger.count == 0)
        }
    }

    @Test func serviceAccountWithoutKeyIsAClearError() {
        let json = Array(#"{"project_id":"p","client_email":"e","token_uri":"https://t"}"#.utf8)
        #expect(throws: SinkConfigurationError.self) { try ServiceAccount(json: Secret(bytes: json, origin: "test")) }
    }
}
