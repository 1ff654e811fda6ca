import Foundation
import NotifyCore
import NotifySinkStandIns
import NotifySinks
import Testing

@Suite struct WebhookSinkTests {
    let secret = Array("webhook secret".utf8)

    func sink(port: Int, authority: TestCertificateAuthority, secrets: [[UInt8]]? = nil, legacySignature: Bool = false)
        throws -> WebhookSink
    {
        try WebhookSink(
            url: "https://127.0.0.1:\(port)\(WebhookReceiver.path)",
            secrets: try (secrets ?? [secret]).map { try WebhookSecret(Secret(bytes: $0, origin: "test")) },
            legacySignature: legacySignature,
            transport: HTTPTransportConfiguration(caFile: authority.caFile)
        )
    }

    @Test func postsTheCommandSignedPerStandardWebhooks() async throws {
        try await withCertificateAuthority { authority in
            let receiver = WebhookReceiver(secret: secret)
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await using(try sink(port: port, authority: authority)) { sink in
                    let command = makeCommand(id: "c1")
                    #expect(await sink.deliver(delivery(command)) == .delivered)
                    let received = receiver.ledger.received
                    #expect(received.map(\.commandId) == ["c1"])
                    #expect(received.first?.body == json(command))
                    #expect(received.first?.headers["webhook-id"] == "c1")
                    let timestamp = try #require(received.first?.headers["webhook-timestamp"].flatMap { Int($0) })
                    #expect(abs(Int(Date().timeIntervalSince1970) - timestamp) < 60)
                    #expect(received.first?.headers["webhook-signature"]?.hasPrefix("v1,") == true)
                }
            }
        }
    }

    @Test func wrongSecretIsRefusedByTheReceiver() async throws {
        try await withCertificateAuthority { authority in
            let receiver = WebhookReceiver(secret: secret)
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await using(try sink(port: port, authority: authority, secrets: [Array("not it".utf8)])) { sink in
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1"))) == .rejected(reason: "HTTP 401"))
                    #expect(receiver.ledger.count == 0)
                }
            }
        }
    }

    @Test func receiverRefusesATimestampOutsideItsTolerance() async throws {
        try await withCertificateAuthority { authority in
            // A negative tolerance puts every timestamp outside it: the signature alone is not enough.
            let receiver = WebhookReceiver(keys: [secret], tolerance: -1)
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await using(try sink(port: port, authority: authority)) { sink in
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1"))) == .rejected(reason: "HTTP 401"))
                }
            }
        }
    }

    @Test func unavailableReceiverIsRetryableWithRetryAfter() async throws {
        try await withCertificateAuthority { authority in
            let receiver = WebhookReceiver(secret: secret)
            receiver.ledger.script("c1", [.error(status: 503, reason: "", retryAfterSeconds: 3)])
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await using(try sink(port: port, authority: authority)) { sink in
                    #expect(
                        await sink.deliver(delivery(makeCommand(id: "c1")))
                            == .retryable(reason: "HTTP 503", retryAfter: .seconds(3)))
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1"))) == .delivered)
                }
            }
        }
    }

    /// The test vector of the Standard Webhooks reference libraries (libraries/go/webhook_test.go, TestWebhookSign).
    @Test func reproducesTheStandardWebhooksTestVector() throws {
        let secret = try WebhookSecret(
            Secret(bytes: Array("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".utf8), origin: "test"))
        let payload = Array(#"{"test": 2432232314}"#.utf8)
        let signature = StandardWebhookSignature.sign(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: payload, secrets: [secret])
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(
            StandardWebhookSignature.verify(
                signature, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: payload,
                keys: [secret.key]))
        #expect(
            !StandardWebhookSignature.verify(
                signature, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265331", body: payload,
                keys: [secret.key]))
        #expect(
            !StandardWebhookSignature.verify(
                signature, id: "msg_other", timestamp: "1614265330", body: payload, keys: [secret.key]))
        #expect(
            !StandardWebhookSignature.verify(
                signature, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: payload + [0x20],
                keys: [secret.key]))
    }

    @Test func twoSecretsSignTwiceAndEitherReceiverVerifies() async throws {
        let current = Array("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".utf8)
        let previous = Array("the previous raw secret".utf8)
        let currentKey = [UInt8](Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!)
        try await withCertificateAuthority { authority in
            for key in [currentKey, previous] {
                let receiver = WebhookReceiver(secret: key)
                try await receiver.serve(tls: authority, logger: testLogger) { port in
                    try await using(try sink(port: port, authority: authority, secrets: [current, previous])) { sink in
                        let command = makeCommand(id: "c1")
                        #expect(await sink.deliver(delivery(command)) == .delivered)
                        let headers = try #require(receiver.ledger.received.first?.headers)
                        let signatures = try #require(headers["webhook-signature"]).split(separator: " ").map(
                            String.init)
                        #expect(signatures.count == 2)
                        let timestamp = try #require(headers["webhook-timestamp"])
                        for (signature, key) in zip(signatures, [currentKey, previous]) {
                            #expect(
                                StandardWebhookSignature.verify(
                                    signature, id: "c1", timestamp: timestamp, body: json(command), keys: [key]))
                        }
                        #expect(
                            !StandardWebhookSignature.verify(
                                signatures[0], id: "c1", timestamp: timestamp, body: json(command), keys: [previous]))
                    }
                }
            }
        }
    }

    @Test(arguments: [false, true])
    func legacySignatureHeaderOnlyWithTheSetting(_ legacySignature: Bool) async throws {
        try await withCertificateAuthority { authority in
            let receiver = WebhookReceiver(secret: secret)
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await using(try sink(port: port, authority: authority, legacySignature: legacySignature)) { sink in
                    let command = makeCommand(id: "c1")
                    #expect(await sink.deliver(delivery(command)) == .delivered)
                    let headers = try #require(receiver.ledger.received.first?.headers)
                    let legacy = headers.keys.filter { $0.hasPrefix("x-notify-") }.sorted()
                    guard legacySignature else {
                        #expect(legacy.isEmpty)
                        return
                    }
                    #expect(legacy == ["x-notify-command-id", "x-notify-signature", "x-notify-timestamp"])
                    let timestamp = try #require(headers["x-notify-timestamp"])
                    #expect(
                        headers["x-notify-signature"]
                            == LegacyWebhookSignature.sign(secret: secret, timestamp: timestamp, body: json(command)))
                    #expect(headers["x-notify-command-id"] == "c1")
                }
            }
        }
    }

    @Test func secretsComeFromTheFileAndTheDirectoryWithoutShowingThem() throws {
        let file = try temporaryFile("secret", contents: Array("raw secret\n".utf8))
        let directory =
            (try temporaryFile("b", contents: Array("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n".utf8)) as NSString)
            .deletingLastPathComponent
        defer {
            try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent)
            try? FileManager.default.removeItem(atPath: directory)
        }
        try Array("another raw secret".utf8).write(to: directory + "/a")
        try Array("skipped".utf8).write(to: directory + "/..data")
        let secrets = try WebhookSecret.load(
            file: file, environmentVariable: "NOTIFY_TEST_UNSET_WEBHOOK_SECRET", directory: directory)
        #expect(
            secrets.map(\.key) == [
                Array("raw secret".utf8), Array("another raw secret".utf8),
                [UInt8](Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!),
            ])
        #expect(!"\(secrets)".contains("raw secret") && !"\(secrets)".contains("MfKQ9r8"))
        #expect(throws: SinkConfigurationError.self) {
            try WebhookSecret(Secret(bytes: Array("whsec_not base64!".utf8), origin: "test"))
        }
        #expect(throws: SinkConfigurationError.self) {
            try WebhookSecret.load(file: nil, environmentVariable: "NOTIFY_TEST_UNSET_WEBHOOK_SECRET", directory: nil)
        }
    }
}

@Suite struct JSONLSinkTests {
    @Test func appendsOneLinePerDeliveredCommand() async throws {
        let path = try temporaryFile("out.jsonl", contents: Array("earlier\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let commands = (1...3).map { makeCommand(id: "c\($0)") }
        try await using(try JSONLSink(path: path)) { sink in
            for command in commands {
                #expect(await sink.deliver(delivery(command)) == .delivered)
            }
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0] == "earlier")
        #expect(lines.dropFirst().map { Array($0.utf8) } == commands.map(json))
    }

    @Test func selectionPicksPathAndProvider() throws {
        let path = try temporaryFile("selected.jsonl")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sink = try JSONLSink(path: path, selection: CommandSelection(paths: [.push], providers: [.fcm]))
        #expect(sink.accepts(makeCommand(id: "c1", provider: .fcm)))
        #expect(!sink.accepts(makeCommand(id: "c2", provider: .apns)))
        #expect(!sink.accepts(makeCommand(id: "c3", provider: .fcm, path: .local)))
    }
}
