import Foundation
import NotifyCore
import NotifySinkStandIns
import NotifySinks
import Testing

@Suite struct APNsSinkTests {
    let fixture = APNsFixture()

    @Test func deliversWithProviderTokenHeadersAndPayload() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn()
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority)) { sink in
                    let first = makeCommand(id: "c1", token: "aa11")
                    let second = makeCommand(id: "c2", token: "bb22")
                    #expect(await sink.deliver(delivery(first)) == .delivered)
                    #expect(await sink.deliver(delivery(second)) == .delivered)
                    let received = apns.ledger.received
                    #expect(received.map(\.token) == ["aa11", "bb22"])
                    #expect(received[0].headers["apns-topic"] == "com.example.chat")
                    #expect(received[0].headers["apns-id"] == first.apns?.headers["apns-id"])
                    let payload = try JSONDecoder().decode(JSONValue.self, from: Data(received[0].payload))
                    #expect(payload == first.apns?.payload)
                    // One provider token, reused.
                    #expect(apns.providerTokens.count == 1)
                }
            }
        }
    }

    @Test func unregisteredAndBadDeviceTokenMakeTheTokenInvalid() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn()
            apns.ledger.script("dead01", [.error(status: 410, reason: "Unregistered")])
            apns.ledger.script("dead02", [.error(status: 400, reason: "BadDeviceToken")])
            apns.ledger.script("dead03", [.error(status: 400, reason: "DeviceTokenNotForTopic")])
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority)) { sink in
                    #expect(
                        await sink.deliver(delivery(makeCommand(id: "c1", token: "dead01")))
                            == .tokenInvalid(reason: "Unregistered", token: "dead01"))
                    #expect(
                        await sink.deliver(delivery(makeCommand(id: "c2", token: "dead02")))
                            == .tokenInvalid(reason: "BadDeviceToken", token: "dead02"))
                    #expect(
                        await sink.deliver(delivery(makeCommand(id: "c3", token: "dead03")))
                            == .tokenInvalid(reason: "DeviceTokenNotForTopic", token: "dead03"))
                    #expect(apns.ledger.count == 0)
                }
            }
        }
    }

    @Test func throttlingAndServerErrorsAreRetryableAndOtherClientErrorsRejected() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn()
            apns.ledger.script("aa01", [.error(status: 429, reason: "TooManyRequests", retryAfterSeconds: 7)])
            apns.ledger.script("aa02", [.error(status: 500, reason: "InternalServerError")])
            apns.ledger.script("aa03", [.error(status: 400, reason: "TopicDisallowed")])
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority)) { sink in
                    #expect(
                        await sink.deliver(delivery(makeCommand(id: "c1", token: "aa01")))
                            == .retryable(reason: "TooManyRequests", retryAfter: .seconds(7)))
                    #expect(
                        await sink.deliver(delivery(makeCommand(id: "c2", token: "aa02")))
                            == .retryable(reason: "InternalServerError"))
                    #expect(
                        await sink.deliver(delivery(makeCommand(id: "c3", token: "aa03")))
                            == .rejected(reason: "TopicDisallowed"))
                    // The scripts are used up: the same tokens now succeed.
                    #expect(await sink.deliver(delivery(makeCommand(id: "c4", token: "aa01"))) == .delivered)
                }
            }
        }
    }

    @Test func expiredProviderTokenIsRenewedAndTheNotificationSent() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn()
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority)) { sink in
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1", token: "aa01"))) == .delivered)
                    let firstToken = try #require(apns.providerTokens.first)
                    apns.expire(providerToken: firstToken)
                    #expect(await sink.deliver(delivery(makeCommand(id: "c2", token: "aa02"))) == .delivered)
                    #expect(apns.providerTokens.count == 2)
                    #expect(apns.ledger.received.map(\.token) == ["aa01", "aa02"])
                }
            }
        }
    }

    @Test func slowAnswersAreWaitedFor() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn()
            apns.ledger.script("aa01", [.slow(.milliseconds(300))])
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority)) { sink in
                    let clock = ContinuousClock()
                    let started = clock.now
                    #expect(await sink.deliver(delivery(makeCommand(id: "c1", token: "aa01"))) == .delivered)
                    #expect(clock.now - started >= .milliseconds(300))
                }
            }
        }
    }

    @Test func manyConcurrentNotificationsAreMultiplexedOverTheConnections() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn(keepsRequests: false)
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority)) { sink in
                    // Payloads far beyond a connection's initial 64 KiB flow-control window, 100 at a time.
                    let count = 1500
                    let results = await withTaskGroup(of: DeliveryResult.self) { group in
                        var results: [DeliveryResult] = []
                        for index in 0..<count {
                            if index >= 100, let result = await group.next() { results.append(result) }
                            group.addTask {
                                await sink.deliver(
                                    delivery(makeCommand(id: "c\(index)", token: String(format: "%04x", index))))
                            }
                        }
                        for await result in group { results.append(result) }
                        return results
                    }
                    #expect(results.count == count)
                    #expect(results.filter { $0 != .delivered }.prefix(3) == [])
                    #expect(apns.ledger.count == count)
                }
            }
        }
    }

    /// What APNs asks of a provider: a few connections kept open, many concurrent streams on each.
    /// Each answer is held back a second, so requests sent at once are under way together.
    @Test func aFewConnectionsCarryManyConcurrentStreams() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn(keepsRequests: false)
            let tokens = (0..<100).map { String(format: "%04x", $0) }
            for token in tokens { apns.ledger.script(token, [.slow(.seconds(1))]) }
            try await apns.serve(tls: authority, logger: testLogger) { port in
                let sink = try fixture.sink(port: port, authority: authority, requestTimeout: .seconds(30))
                try await using(sink) { sink in
                    let results = await withTaskGroup(of: DeliveryResult.self) { group in
                        for (index, token) in tokens.enumerated() {
                            group.addTask { await sink.deliver(delivery(makeCommand(id: "c\(index)", token: token))) }
                        }
                        return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
                    }
                    #expect(results.filter { $0 != .delivered }.isEmpty)
                    #expect(apns.ledger.count == tokens.count)
                    #expect(apns.connectionCount >= 1)
                    #expect(HTTPTransportConfiguration().connections <= 4, "a few connections")
                    #expect(
                        apns.connectionCount <= HTTPTransportConfiguration().connections,
                        "one connection per request?")
                    #expect(apns.mostConcurrentStreams >= 10, "at most \(apns.mostConcurrentStreams) streams at once")
                }
            }
        }
    }

    @Test func anAnswerThatTakesTooLongIsAPassingFailureAndTheConnectionStaysUsable() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn()
            // The stall far outlasts the timeout; the timeout leaves a busy test machine time for the next request.
            apns.ledger.script("aa01", [.stall(.seconds(6))])
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority, requestTimeout: .milliseconds(1500)))
                { sink in
                    let result = await sink.deliver(delivery(makeCommand(id: "c1", token: "aa01")))
                    guard case .retryable(let reason, _) = result else {
                        Issue.record("expected a passing failure, got \(result)")
                        return
                    }
                    #expect(reason.hasPrefix("transport"))
                    #expect(await sink.deliver(delivery(makeCommand(id: "c2", token: "aa02"))) == .delivered)
                    #expect(apns.ledger.received.map(\.token) == ["aa02"])
                }
            }
        }
    }

    @Test func oversizedPayloadIsRejectedWithoutSending() async throws {
        try await withCertificateAuthority { authority in
            let apns = fixture.standIn()
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await using(try fixture.sink(port: port, authority: authority)) { sink in
                    var command = makeCommand(id: "c1", token: "aa01")
                    command.apns?.payload = .object([
                        "aps": .object(["alert": .string(String(repeating: "x", count: 5000))])
                    ])
                    #expect(await sink.deliver(delivery(command)) == .rejected(reason: "PayloadTooLarge"))
                    #expect(apns.ledger.count == 0)
                }
            }
        }
    }

    @Test func serverNotSignedByTheTrustedCAIsNotTalkedTo() async throws {
        try await withCertificateAuthority { authority in
            try await withCertificateAuthority { otherAuthority in
                let apns = fixture.standIn()
                try await apns.serve(tls: authority, logger: testLogger) { port in
                    try await using(
                        try fixture.sink(port: port, authority: otherAuthority, requestTimeout: .seconds(1))
                    ) { sink in
                        let result = await sink.deliver(delivery(makeCommand(id: "c1", token: "aa01")))
                        guard case .retryable(let reason, _) = result else {
                            Issue.record("expected a transport failure, got \(result)")
                            return
                        }
                        #expect(reason.hasPrefix("transport"))
                        #expect(apns.ledger.count == 0)
                    }
                }
            }
        }
    }
}
