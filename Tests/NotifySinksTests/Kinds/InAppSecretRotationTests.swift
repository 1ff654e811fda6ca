import Foundation
import NotifySinks
import Testing

/// Rotating the gateway's token secrets through its secrets directory, with real WebSocket clients.
@Suite struct InAppSecretRotationTests {
    let oldSecret = Array("the old secret, of kid 2026-01, 32 bytes".utf8)
    let newSecret = Array("the new secret, of kid 2026-02, 32 bytes".utf8)

    /// Polls `condition` every 50 ms for up to 10 s (the gateway reads its directory every 100 ms here).
    func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw SinkConfigurationError("not within 10 s: \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func aSecretRotatesWithoutDroppingClients() async throws {
        let oldFile = try temporaryFile("2026-01", contents: oldSecret)
        let directory = (oldFile as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gateway = InAppGateway(
            secrets: InAppTokenSecrets(directory: directory, reloadInterval: .milliseconds(100)), logger: testLogger)
        let sink = InAppSink(gateway: gateway, ackTimeout: .seconds(5))
        let oldToken = try await inAppToken(device: "old", secret: oldSecret, kid: "2026-01")
        let newToken = try await inAppToken(device: "new", secret: newSecret, kid: "2026-02")
        let oldClient = TestDevice()
        let newClient = TestDevice()
        try await gateway.serve(host: "127.0.0.1", port: 0) { port in
            try await withThrowingTaskGroup(of: Void.self) { group in
                defer {
                    oldClient.stop()
                    newClient.stop()
                }
                group.addTask { try await oldClient.run(port: port, token: oldToken) }
                try await waitUntilConnected(gateway, deviceId: "old")
                // The new secret is not there yet.
                let beforeAdding = try await challenge(port: port, authorization: "Bearer " + newToken)
                #expect(beforeAdding?.contains("unknown kid: ") == true, "\(beforeAdding ?? "not 401")")

                // Both secrets: the old client stays, a new one connects with the new kid.
                try newSecret.write(to: directory + "/2026-02")
                try await eventually("a client with the new kid connects") {
                    try await connects(gateway, port: port, token: newToken, deviceId: "new")
                }
                group.addTask { try await newClient.run(port: port, token: newToken) }
                try await waitUntilConnected(gateway, deviceId: "new")
                #expect(
                    await sink.deliver(delivery(makeCommand(id: "c1", userId: "u1", deviceId: "old", path: .local)))
                        == .delivered)
                #expect(
                    await sink.deliver(delivery(makeCommand(id: "c2", userId: "u1", deviceId: "new", path: .local)))
                        == .delivered)

                // The old secret retired: a token of its kid is refused as unknown; the open connections stay.
                try FileManager.default.removeItem(atPath: oldFile)
                // (Probed as another device: a probe that got in would replace the old client's connection.)
                let oldKidProbe = try await inAppToken(device: "probe", secret: oldSecret, kid: "2026-01")
                try await eventually("a token of the old kid is refused") {
                    try await !connects(gateway, port: port, token: oldKidProbe, deviceId: "probe")
                }
                let afterRemoving = try await challenge(port: port, authorization: "Bearer " + oldKidProbe)
                #expect(afterRemoving?.contains("unknown kid: ") == true, "\(afterRemoving ?? "not 401")")
                #expect(
                    await sink.deliver(delivery(makeCommand(id: "c3", userId: "u1", deviceId: "old", path: .local)))
                        == .delivered)
                #expect(
                    await sink.deliver(delivery(makeCommand(id: "c4", userId: "u1", deviceId: "new", path: .local)))
                        == .delivered)
                oldClient.stop()
                newClient.stop()
                try await group.waitForAll()
            }
        }
        #expect(oldClient.received.withLock { $0 } == ["c1", "c3"])
        #expect(newClient.received.withLock { $0 } == ["c2", "c4"])
    }
}

extension Array where Element == UInt8 {
    /// Writes these bytes to `path`.
    func write(to path: String) throws {
        try Data(self).write(to: URL(fileURLWithPath: path))
    }
}
