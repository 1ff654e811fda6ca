import Crypto
import Foundation
import HummingbirdWSClient
import NotifyCore
import NotifyKafka
import NotifySinkStandIns
import NotifySinks
import Testing
import _CryptoExtras

#if canImport(Glibc)
    import Glibc
#endif

extension SinkRuntimeTests {
    /// Secrets never reach the logs: each kind runs as `notify sink` at trace level through failing
    /// paths (refusals, retries, renewed credentials, dead letters, refused connections), and
    /// no line it prints holds its key material or a credential made from it.
    @Suite struct SecretsInLogsTests {
        /// `notify sink` at trace level with `arguments` while `body` runs; what it printed, after SIGTERM.
        func traceOutput(_ arguments: [String], _ body: () async throws -> Void) async throws -> String {
            let process = try SinkProcess(arguments: arguments + ["--set", "log.level=trace"])
            do {
                try await body()
            } catch {
                await process.stop(with: SIGKILL)
                throw error
            }
            let (status, output) = await process.finish(with: SIGTERM)
            #expect(status == 0, "\(output.suffix(2000))")
            return output
        }

        /// Expects `output` to be a trace-level log holding none of `secrets`.
        func expectNoSecrets(
            _ secrets: [String], in output: String, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(
                output.contains(" trace ") || output.contains(" debug "), "not a trace-level log",
                sourceLocation: sourceLocation)
            for secret in secrets where !secret.isEmpty {
                let lines = output.split(separator: "\n").filter { $0.contains(secret) }
                #expect(lines.isEmpty, "a secret is logged: \(lines.prefix(3))", sourceLocation: sourceLocation)
            }
        }

        /// Waits until notify.outcomes holds `count` results.
        func waitForOutcomes(_ count: Int, on broker: EmbeddedBroker) async throws {
            try await waitUntil(timeout: .seconds(60)) { try await readOutcomes(on: broker).count >= count }
        }

        /// The base64 lines of a PEM's body: any of them in a log gives the key away in part.
        func pemBody(_ pem: String) -> [String] {
            pem.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") && $0.count >= 16 }
        }

        @Test func apnsLogsNeitherItsKeyNorItsProviderTokens() async throws {
            let fixture = APNsFixture()
            let apns = fixture.standIn()
            apns.ledger.script("0001", [.error(status: 403, reason: "ExpiredProviderToken")])
            apns.ledger.script("0002", Array(repeating: .error(status: 500, reason: "InternalServerError"), count: 2))
            apns.ledger.script("0003", [.error(status: 410, reason: "Unregistered")])
            apns.ledger.script("0004", [.error(status: 400, reason: "BadDeviceToken")])
            let pem = fixture.key.pemRepresentation
            let keyFile = try temporaryFile("key.p8", contents: Array(pem.utf8))
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            try await withCertificateAuthority { authority in
                try await apns.serve(tls: authority, logger: testLogger) { port in
                    try await withSinkTopics { broker in
                        let commands = (1...4).map { makeCommand(id: "c\($0)", token: String(format: "%04x", $0)) }
                        try await produceCommands(commands, to: broker)
                        let output = try await traceOutput([
                            "--kind", "apns", "--bootstrap", broker.bootstrapServers,
                            "--endpoint", "https://127.0.0.1:\(port)",
                            "--ca-file", authority.caFile, "--key-file", keyFile, "--key-id", fixture.keyId,
                            "--team-id", fixture.teamId, "--max-attempts", "2",
                        ]) {
                            try await waitForOutcomes(commands.count, on: broker)
                        }
                        let tokens = apns.providerTokens
                        #expect(tokens.count >= 2, "the provider token was renewed")
                        let rawKey = fixture.key.rawRepresentation
                        expectNoSecrets(
                            pemBody(pem) + tokens.flatMap { [$0] + $0.split(separator: ".").map(String.init) }
                                + [rawKey.base64EncodedString(), rawKey.map { String(format: "%02x", $0) }.joined()],
                            in: output)
                    }
                }
            }
        }

        @Test func fcmLogsNeitherItsServiceAccountKeyNorItsAccessTokens() async throws {
            let key = FCMSinkTests.key
            let fcm = FCMStandIn(
                projectId: "chat-test", clientEmail: "notify@chat-test.iam.gserviceaccount.com",
                publicKey: key.publicKey)
            fcm.ledger.script("tok-2", Array(repeating: .error(status: 503, reason: "UNAVAILABLE"), count: 2))
            fcm.ledger.script("tok-3", [.error(status: 404, reason: "UNREGISTERED")])
            fcm.ledger.script("tok-4", [.error(status: 400, reason: "INVALID_ARGUMENT")])
            try await withCertificateAuthority { authority in
                try await fcm.serve(tls: authority, logger: testLogger) { port in
                    let accountFile = try temporaryFile(
                        "account.json",
                        contents: try fcm.serviceAccountJSON(privateKeyPEM: key.pemRepresentation, port: port))
                    defer { try? FileManager.default.removeItem(atPath: accountFile) }
                    try await withSinkTopics { broker in
                        let commands = (1...4).map {
                            makeCommand(id: "c\($0)", userId: "u\($0)", provider: .fcm, token: "tok-\($0)")
                        }
                        let output = try await traceOutput([
                            "--kind", "fcm", "--bootstrap", broker.bootstrapServers,
                            "--endpoint", "https://127.0.0.1:\(port)",
                            "--ca-file", authority.caFile, "--service-account", accountFile, "--max-attempts", "2",
                        ]) {
                            try await produceCommands([commands[0]], to: broker)
                            try await waitForOutcomes(1, on: broker)
                            // The access token in use is revoked: the next send is refused and exchanges another.
                            fcm.revokeAccessTokens()
                            try await produceCommands(Array(commands.dropFirst()), to: broker)
                            try await waitForOutcomes(commands.count, on: broker)
                        }
                        #expect(fcm.accessTokens.count >= 2, "an access token was exchanged again")
                        expectNoSecrets(pemBody(key.pemRepresentation) + fcm.accessTokens, in: output)
                    }
                }
            }
        }

        @Test func webhookLogsNotItsSecret() async throws {
            let secret = "webhook-secret-\(UUID().uuidString)"
            let secretFile = try temporaryFile("secret", contents: Array(secret.utf8))
            defer { try? FileManager.default.removeItem(atPath: secretFile) }
            let receiver = WebhookReceiver(secret: Array(secret.utf8))
            receiver.ledger.script("d2-0", Array(repeating: .error(status: 500, reason: "internal"), count: 2))
            receiver.ledger.script("d3-0", [.error(status: 400, reason: "refused")])
            try await withCertificateAuthority { authority in
                try await receiver.serve(tls: authority, logger: testLogger) { port in
                    try await withSinkTopics { broker in
                        let commands = (1...3).flatMap { deviceCommands($0, count: 1) }
                        try await produceCommands(commands, to: broker)
                        let output = try await traceOutput([
                            "--kind", "webhook", "--bootstrap", broker.bootstrapServers,
                            "--url", "https://127.0.0.1:\(port)\(WebhookReceiver.path)", "--secret-file", secretFile,
                            "--ca-file", authority.caFile, "--max-attempts", "2",
                        ]) {
                            try await waitForOutcomes(commands.count, on: broker)
                        }
                        expectNoSecrets([secret], in: output)
                    }
                }
            }
        }

        @Test func inAppLogsNeitherItsSecretNorTheDevicesTokens() async throws {
            let secret = "in-app-secret-\(UUID().uuidString)"
            let secretFile = try temporaryFile("secret", contents: Array(secret.utf8))
            defer { try? FileManager.default.removeItem(atPath: secretFile) }
            let good = try await inAppToken(secret: Array(secret.utf8))
            let forged = try await inAppToken(secret: Array("another secret, also 32 bytes or more".utf8))
            let expired = try await inAppToken(expiresIn: -60, secret: Array(secret.utf8))
            let port = try freePort()
            try await withSinkTopics { broker in
                let connected = makeCommand(id: "here", userId: "u1", deviceId: "d1", path: .local)
                let away = makeCommand(id: "away", userId: "u1", deviceId: "d9", path: .local)
                let device = TestDevice()
                let output = try await traceOutput([
                    "--kind", "inapp", "--bootstrap", broker.bootstrapServers, "--listen", "127.0.0.1:\(port)",
                    "--secret-file", secretFile,
                ]) {
                    for bad in [forged, expired] {
                        try await waitUntil(timeout: .seconds(60)) {
                            do {
                                try await TestDevice().run(port: port, token: bad)
                                return false
                            } catch {
                                // Refused, not unreachable.
                                return error as? WebSocketClientError == .webSocketUpgradeFailed
                            }
                        }
                    }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await device.run(port: port, token: good) }
                        defer { device.stop() }
                        try await produceCommands([away], to: broker)
                        try await waitForOutcomes(1, on: broker)
                        try await produceCommands([connected], to: broker)
                        try await waitForOutcomes(2, on: broker)
                        device.stop()
                        try await group.waitForAll()
                    }
                }
                #expect(device.received.withLock { $0 } == ["here"])
                let signedParts = [good, forged, expired].flatMap {
                    $0.split(separator: ".").suffix(2).map(String.init)
                }
                expectNoSecrets([secret] + signedParts, in: output)
            }
        }

        /// A key file that is not a key is refused without printing what it holds.
        @Test func anUnusableKeyIsRefusedWithoutItsContents() async throws {
            let contents = "not-a-key-but-secret-\(UUID().uuidString)"
            let keyFile = try temporaryFile("key.p8", contents: Array(contents.utf8))
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            try await withSinkTopics { broker in
                let process = try SinkProcess(arguments: [
                    "--kind", "apns", "--bootstrap", broker.bootstrapServers, "--key-file", keyFile,
                    "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--set", "log.level=trace",
                ])
                try await waitUntil(timeout: .seconds(60)) { !process.process.isRunning }
                let (status, output) = await process.finish(with: SIGKILL)
                #expect(status != 0)
                #expect(output.contains(keyFile), "the error names the file: \(output)")
                #expect(!output.contains(contents), "\(output)")
            }
        }
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago (for a process that cannot report the port it bound).
private func freePort() throws -> Int {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
        }
    }
    guard bound else { throw SinkConfigurationError("no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
