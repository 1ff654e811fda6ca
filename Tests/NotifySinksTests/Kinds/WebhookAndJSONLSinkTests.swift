import Foundation
import NotifyCore
import NotifySinkStandIns
import NotifySinks
import Testing

@Suite struct WebhookSinkTests {
    let secret = Array("webhook secret".utf8)

    func sink(port: Int, authority: TestCertificateAuthority, secret: [UInt8]? = nil) throws -> WebhookSink {
        try WebhookSink(
            url: "https://127.0.0.1:\(port)\(WebhookReceiver.path)",
            secret: Secret(bytes: secret ?? self.secret, origin: "test"),
            transport: HTTPTransportConfiguration(caFile: authority.caFile)
        )
    }

    @Test func postsTheCommandSigned() async throws {
        try await withCertificateAuthority { authority in
            let receiver = WebhookReceiver(secret: secret)
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await using(try sink(port: port, authority: authority)) { sink in
                    let command = makeCommand(id: "c1")
                    #expect(await sink.deliver(delivery(command)) == .delivered)
                    let received = receiver.ledger.received
                    #expect(received.map(\.commandId) == ["c1"])
                    #expect(received.first?.body == json(command))
                }
            }
        }
    }

    @Test func wrongSecretIsRefusedByTheReceiver() async throws {
        try await withCertificateAuthority { authority in
            let receiver = WebhookReceiver(secret: secret)
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await using(try sink(port: port, authority: authority, secret: Array("not it".utf8))) { sink in
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1"))) == .rejected(reason: "HTTP 401"))
                    #expect(receiver.ledger.count == 0)
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
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1"))) == .retryable(reason: "HTTP 503", retryAfter: .seconds(3)))
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1"))) == .delivered)
                }
            }
        }
    }

    @Test func signatureCoversTimestampAndBody() {
        let body = Array(#"{"id":"c1"}"#.utf8)
        let signature = WebhookSignature.sign(secret: secret, timestamp: "1700000000", body: body)
        #expect(signature.hasPrefix("sha256="))
        #expect(WebhookSignature.verify(signature, secret: secret, timestamp: "1700000000", body: body))
        #expect(!WebhookSignature.verify(signature, secret: secret, timestamp: "1700000001", body: body))
        #expect(!WebhookSignature.verify(signature, secret: secret, timestamp: "1700000000", body: body + [0x20]))
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
