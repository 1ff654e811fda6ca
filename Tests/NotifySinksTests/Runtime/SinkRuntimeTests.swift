import Foundation
import NotifyCore
import NotifyKafka
import NotifySinkStandIns
import NotifySinks
import Testing

/// The command ids an APNs stand-in accepted, in order (the payload's body is "hello <id>").
func acceptedIds(_ apns: APNsStandIn) -> [String] {
    apns.ledger.received.compactMap { notification in
        guard let payload = try? JSONDecoder().decode(JSONValue.self, from: Data(notification.payload)),
            let body = payload["aps"]?["alert"]?["body"]?.stringValue
        else { return nil }
        return String(body.dropFirst("hello ".count))
    }
}

/// A device's commands: ids `<device>-<n>`, token = the device's hex token.
func deviceCommands(_ device: Int, count: Int, user: Int? = nil) -> [NotificationCommand] {
    (0..<count).map { index in
        makeCommand(
            id: "d\(device)-\(index)", userId: "u\(user ?? device)", deviceId: "d\(device)",
            token: String(format: "%04x", device))
    }
}

@Suite(.serialized) struct SinkRuntimeTests {
    let fixture = APNsFixture()

    /// Runs `body` with an APNs stand-in and a broker; `body` makes a fresh APNs sink for each
    /// runtime it starts (a runtime shuts its sink down when it ends).
    func withAPNs(_ apns: APNsStandIn, _ body: (EmbeddedBroker, () throws -> APNsSink) async throws -> Void)
        async throws
    {
        try await withCertificateAuthority { authority in
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await withSinkTopics { broker in
                    try await body(broker) { try fixture.sink(port: port, authority: authority) }
                }
            }
        }
    }

    @Test func deliversInDeviceOrderAndReportsEveryOutcome() async throws {
        let apns = fixture.standIn()
        apns.ledger.script("dead", [.error(status: 410, reason: "Unregistered")])
        apns.ledger.script("bad0", [.error(status: 400, reason: "TopicDisallowed")])
        try await withAPNs(apns) { broker, makeSink in
            let regular = (1...5).flatMap { deviceCommands($0, count: 10) }
            let expired = makeCommand(id: "old", userId: "u9", deviceId: "d9", token: "0009", expiresIn: -10)
            let unregistered = makeCommand(id: "gone", userId: "u8", deviceId: "d8", token: "dead")
            let refused = makeCommand(id: "refused", userId: "u7", deviceId: "d7", token: "bad0")
            let forFCM = makeCommand(id: "fcm", userId: "u6", deviceId: "d6", provider: .fcm)
            try await produceCommands(
                regular + [expired, unregistered, refused, forFCM], raw: [(key: "u5", value: "not a command")],
                to: broker)

            try await withRunningSink(sinkRuntime(try makeSink(), broker: broker)) {
                try await waitUntil { try await readOutcomes(on: broker).count >= regular.count + 3 }
            }

            let accepted = acceptedIds(apns)
            #expect(accepted.count == regular.count)
            for device in 1...5 {
                let ids = accepted.filter { $0.hasPrefix("d\(device)-") }
                #expect(ids == (0..<10).map { "d\(device)-\($0)" }, "order of device d\(device)")
            }
            let outcomes = try await readOutcomes(on: broker)
            #expect(outcomes.count == regular.count + 3)
            #expect(Set(outcomes.filter { $0.outcome == .delivered }.map(\.commandId)) == Set(regular.map(\.id)))
            #expect(outcomes.first { $0.commandId == "old" }?.outcome == .expired)
            let gone = try #require(outcomes.first { $0.commandId == "gone" })
            #expect(gone.outcome == .tokenInvalid)
            #expect(gone.reason == "Unregistered")
            #expect(gone.token == "dead")
            #expect(outcomes.first { $0.commandId == "refused" }?.outcome == .failed)
            #expect(outcomes.allSatisfy { $0.sink == "apns" })
            #expect(!outcomes.contains { $0.commandId == "fcm" })

            let deadLetters = try await readTopic("notify.dlq", on: broker)
            #expect(deadLetters.count == 2)
            let refusedLetter = try #require(deadLetters.first { $0.header("notify-reason") == "TopicDisallowed" })
            #expect(refusedLetter.value == json(refused))
            #expect(refusedLetter.key == Array("u7".utf8))
            #expect(refusedLetter.header("notify-source-topic") == "notify.commands")
            #expect(Int32(refusedLetter.header("notify-source-partition") ?? "").map { (0..<4).contains($0) } == true)
            #expect(Int64(refusedLetter.header("notify-source-offset") ?? "") != nil)
            let garbage = try #require(deadLetters.first { $0.value == Array("not a command".utf8) })
            #expect(garbage.header("notify-reason")?.hasPrefix("invalid command") == true)
        }
    }

    @Test func aCommandInBackoffHoldsBackOnlyItsDevice() async throws {
        let apns = fixture.standIn()
        // Retry-After gives the fast device three seconds for its two remaining requests: room for a
        // machine busy with the tests beside this one (one second was once not enough in CI).
        apns.ledger.script("0001", [.error(status: 429, reason: "TooManyRequests", retryAfterSeconds: 3)])
        try await withAPNs(apns) { broker, makeSink in
            // Same user, two devices: same partition, separate queues.
            let slow = deviceCommands(1, count: 3, user: 1)
            let fast = deviceCommands(2, count: 3, user: 1)
            try await produceCommands(slow + fast, to: broker)
            try await withRunningSink(sinkRuntime(try makeSink(), broker: broker)) {
                try await waitUntil { apns.ledger.count >= 6 }
            }
            let accepted = acceptedIds(apns)
            #expect(accepted.filter { $0.hasPrefix("d1-") } == ["d1-0", "d1-1", "d1-2"])
            #expect(accepted.filter { $0.hasPrefix("d2-") } == ["d2-0", "d2-1", "d2-2"])
            // The fast device finished while the slow one waited for Retry-After.
            #expect(accepted.firstIndex(of: "d2-2")! < accepted.firstIndex(of: "d1-0")!)
            #expect(apns.ledger.arrivals(of: "0001") == 4)
            // The retry came no sooner than Retry-After said (the runtime's own backoff is 50 ms).
            let times = apns.ledger.arrivalTimes(of: "0001")
            if times.count >= 2 { #expect(times[1] - times[0] >= .seconds(3), "retried after \(times[1] - times[0])") }
        }
    }

    @Test func exhaustedRetriesAreDeadLettered() async throws {
        let apns = fixture.standIn()
        apns.ledger.script("0001", Array(repeating: .error(status: 500, reason: "InternalServerError"), count: 3))
        try await withAPNs(apns) { broker, makeSink in
            try await produceCommands(deviceCommands(1, count: 1), to: broker)
            let runtime = sinkRuntime(
                try makeSink(), broker: broker, retry: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(20)))
            try await withRunningSink(runtime) {
                try await waitUntil { try await readOutcomes(on: broker).count == 1 }
            }
            let outcome = try #require(try await readOutcomes(on: broker).first)
            #expect(outcome.outcome == .failed)
            #expect(outcome.reason == "retries exhausted: InternalServerError")
            let letters = try await readTopic("notify.dlq", on: broker)
            #expect(letters.map { $0.header("notify-reason") } == ["retries exhausted: InternalServerError"])
            #expect(apns.ledger.arrivals(of: "0001") == 3)
            #expect(apns.ledger.count == 0)
        }
    }

    @Test func outcomesOfAnEarlierInstanceAreNotRedone() async throws {
        let apns = fixture.standIn()
        try await withAPNs(apns) { broker, makeSink in
            let done = makeCommand(id: "done", userId: "u1", deviceId: "d1", token: "0001")
            let fresh = makeCommand(id: "fresh", userId: "u1", deviceId: "d1", token: "0001")
            let stale = makeCommand(
                id: "stale", userId: "u2", deviceId: "d2", token: "0bad", at: Date().addingTimeInterval(-60))
            let now = Date().formatted(.iso8601)
            try await produceOutcomes(
                [
                    NotificationOutcome(
                        id: "done:delivered", at: now, commandId: "done", sink: "apns", recipient: done.recipient,
                        conversationId: "c1", messageId: "m-done", outcome: .delivered),
                    NotificationOutcome(
                        id: "other:token-invalid", at: now, commandId: "other", sink: "apns",
                        recipient: stale.recipient,
                        conversationId: "c1", messageId: "m-other", outcome: .tokenInvalid, reason: "Unregistered",
                        token: "0bad"),
                    // Another kind's outcome for the same id does not count for apns.
                    NotificationOutcome(
                        id: "fresh:delivered", at: now, commandId: "fresh", sink: "webhook", recipient: fresh.recipient,
                        conversationId: "c1", messageId: "m-fresh", outcome: .delivered),
                ], to: broker)
            try await produceCommands([done, fresh, stale], to: broker)
            try await withRunningSink(sinkRuntime(try makeSink(), broker: broker)) {
                try await waitUntil { try await readOutcomes(on: broker).count >= 5 }
            }
            #expect(acceptedIds(apns) == ["fresh"])
            let outcomes = try await readOutcomes(on: broker)
            #expect(outcomes.count == 5)
            let staleOutcome = try #require(outcomes.first { $0.commandId == "stale" })
            #expect(staleOutcome.outcome == .tokenInvalid)
            #expect(staleOutcome.token == "0bad")
            #expect(outcomes.filter { $0.commandId == "done" }.count == 1)
        }
    }

    @Test func stoppedMidStreamAndRestartedDeliversEveryCommandOnce() async throws {
        let apns = fixture.standIn()
        for device in 1...30 {
            apns.ledger.script(String(format: "%04x", device), Array(repeating: .slow(.milliseconds(5)), count: 10))
        }
        try await withAPNs(apns) { broker, makeSink in
            let commands = (1...30).flatMap { deviceCommands($0, count: 10) }
            try await produceCommands(commands, to: broker)
            try await withRunningSink(sinkRuntime(try makeSink(), broker: broker)) {
                try await waitUntil { apns.ledger.count >= 80 }
            }
            let afterFirst = apns.ledger.count
            #expect(afterFirst < commands.count, "the first instance was stopped mid-stream")
            try await withRunningSink(sinkRuntime(try makeSink(), broker: broker)) {
                try await waitUntil { apns.ledger.count >= commands.count }
                try await waitUntilEveryCommandIsCommitted(by: "notify-sink-apns", on: broker)
            }
            let accepted = acceptedIds(apns)
            #expect(accepted.count == commands.count)
            #expect(Set(accepted) == Set(commands.map(\.id)))
            for device in 1...30 {
                #expect(accepted.filter { $0.hasPrefix("d\(device)-") } == (0..<10).map { "d\(device)-\($0)" })
            }
            let outcomes = try await readOutcomes(on: broker)
            #expect(Set(outcomes.map(\.commandId)) == Set(commands.map(\.id)))
            #expect(outcomes.count == commands.count)
        }
    }
}

/// The Kafka-backed sink tests run one at a time (each starts a broker, servers and runtimes),
/// so on a small machine they leave room for the other modules' tests running beside them.
extension SinkRuntimeTests {
    @Suite struct InAppRuntimeTests {
        @Test func localCommandsReachTheConnectedDeviceAndOthersBecomeUndeliverableLocally() async throws {
            let gateway = InAppGateway(secrets: InAppTokenSecrets(withoutKid: inAppSecret), logger: testLogger)
            let device = TestDevice()
            let token = try await inAppToken()
            try await withSinkTopics { broker in
                let connected = (0..<3).map {
                    makeCommand(id: "here-\($0)", userId: "u1", deviceId: "d1", path: .local)
                }
                let away = makeCommand(id: "away", userId: "u2", deviceId: "d2", path: .local)
                let push = makeCommand(id: "push", userId: "u1", deviceId: "d1")
                try await gateway.serve(host: "127.0.0.1", port: 0) { port in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await device.run(port: port, token: token) }
                        defer { device.stop() }
                        try await waitUntil { gateway.isConnected(userId: "u1", deviceId: "d1") }
                        try await produceCommands(connected + [away, push], to: broker)
                        let runtime = sinkRuntime(InAppSink(gateway: gateway, ackTimeout: .seconds(2)), broker: broker)
                        try await withRunningSink(runtime) {
                            try await waitUntil { try await readOutcomes(on: broker).count >= 4 }
                        }
                        device.stop()
                        try await group.waitForAll()
                    }
                }
                #expect(device.received.withLock { $0 } == connected.map(\.id))
                let outcomes = try await readOutcomes(on: broker)
                #expect(outcomes.count == 4)
                #expect(Set(outcomes.filter { $0.outcome == .delivered }.map(\.commandId)) == Set(connected.map(\.id)))
                let undeliverable = try #require(outcomes.first { $0.commandId == "away" })
                #expect(undeliverable.outcome == .undeliverableLocal)
                #expect(undeliverable.reason == "not-connected")
                #expect(outcomes.allSatisfy { $0.sink == "inapp" })
            }
        }
    }
}
