import Foundation
import Logging
import NotifyCore
import Testing

@testable import NotifyCLI
@testable import NotifyKafka

/// A stale or wrong bootstrap list fails a Kafka command within the connect timeout, with a message
/// that names the list, where it came from and how to set it. Nothing listens on 127.0.0.1:9.
@Suite struct UnreachableBootstrapTests {
    @Test("produce to a dead bootstrap fails within --connect-timeout, naming it and how to set it")
    func produceFailsWithinTheConnectTimeout() async throws {
        let started = ContinuousClock.now
        let produce = try NotifyProcess([
            "produce", "--bootstrap", "127.0.0.1:9", "--connect-timeout", "2", "--topic", "chat.messages",
        ])
        defer { produce.kill() }
        let status = try await produce.exitStatus(timeout: .seconds(60))
        let elapsed = ContinuousClock.now - started
        #expect(status != 0)
        // 2 s plus the process's start: 2.2 s alone, 21 s once with the whole suite starting on 2 cores.
        // The bound tells a process that gives up from one that waits for a broker for good.
        #expect(elapsed < .seconds(40), "took \(elapsed)")
        let output = produce.output.joined(separator: "\n")
        #expect(output.contains("no Kafka broker answered at 127.0.0.1:9 (--bootstrap) within 2 s"), "\(output)")
        #expect(output.contains("--bootstrap HOST:PORT,... or NOTIFY_BOOTSTRAP"))
    }

    @Test("inspect gives up after 10 s by default")
    func inspectDefaultTimeoutIsTenSeconds() async throws {
        let started = ContinuousClock.now
        let inspect = try NotifyProcess(["inspect", "--bootstrap", "127.0.0.1:9", "--topic", "chat.messages"])
        defer { inspect.kill() }
        #expect(try await inspect.exitStatus(timeout: .seconds(60)) != 0)
        let elapsed = ContinuousClock.now - started
        // At least the 10 s default; at most that plus a start as slow as one seen under the whole suite.
        #expect(elapsed >= .seconds(9) && elapsed < .seconds(40), "took \(elapsed)")
        #expect(
            inspect.output.contains { $0.contains("no Kafka broker answered at 127.0.0.1:9 (--bootstrap) within 10 s") }
        )
    }

    @Test("pipeline with a dead bootstrap fails within the timeout and says where the list came from")
    func pipelineNamesItsBootstrap() async throws {
        let pipeline = try NotifyProcess([
            "pipeline", "--bootstrap", "127.0.0.1:9", "--connect-timeout", "1", "--http-listen", "127.0.0.1:0",
        ])
        defer { pipeline.kill() }
        #expect(try await pipeline.exitStatus(timeout: .seconds(20)) != 0)
        #expect(
            pipeline.output.contains {
                $0.contains("no Kafka broker answered at 127.0.0.1:9 (--bootstrap) within 1 s")
            },
            "\(pipeline.output)")
    }

    @Test("the bootstrap's origin: a flag, --set, a variable, a config file, or the default 127.0.0.1:9092")
    func bootstrapOrigin() throws {
        let none = try KafkaOptions.parse([])
        #expect(
            try ServiceOptions.parse([]).bootstrapOrigin(kafka: none, environment: [:])
                == "the default: no --bootstrap, NOTIFY_BOOTSTRAP or config file set it")
        #expect(
            try ServiceOptions.parse([]).bootstrapOrigin(
                kafka: KafkaOptions.parse(["--bootstrap", "a:1"]), environment: [:]) == "--bootstrap")
        #expect(
            try ServiceOptions.parse(["--set", "kafka.bootstrap=a:1"]).bootstrapOrigin(kafka: none, environment: [:])
                == "--set kafka.bootstrap")
        #expect(
            try ServiceOptions.parse([]).bootstrapOrigin(kafka: none, environment: ["NOTIFY_BOOTSTRAP": "a:1"])
                == "NOTIFY_BOOTSTRAP")
        #expect(
            try ServiceOptions.parse(["--config", "n.json"]).bootstrapOrigin(kafka: none, environment: [:])
                == "kafka.bootstrap of n.json, or the default")
    }

    @Test("inspect of a topic the cluster does not have fails, naming the nearest one it has")
    func inspectUnknownTopic() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "test")) { broker in
            try await broker.createTopic("chat.messages", partitions: 1)
            let inspect = try NotifyProcess([
                "inspect", "--bootstrap", broker.bootstrapServers, "--topic", "chat.mesages",
            ])
            defer { inspect.kill() }
            #expect(try await inspect.exitStatus() != 0)
            #expect(
                inspect.output.contains {
                    $0.contains("the topic chat.mesages does not exist; did you mean chat.messages?")
                },
                "\(inspect.output)")
        }
    }

    @Test("inspect prints commands (badge pushes included) and outcomes in words")
    func inspectIsReadable() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "test")) { broker in
            try await broker.createTopic("notify.commands", partitions: 1)
            try await broker.createTopic("notify.outcomes", partitions: 1)
            let configuration = try CoreConfiguration.load(
                schemasDirectory: repositoryRoot.appendingPathComponent("Schemas").path)
            let scenario = try [UInt8](
                Data(contentsOf: repositoryRoot.appendingPathComponent("Schemas/examples/scenarios/demo.json")))
            let commands = try ScenarioRunner(configuration: configuration).run(scenario: scenario).commands
            let badge = try #require(commands.first { $0.content["title"] == nil })
            let outcome = NotificationOutcome(
                id: "o-1", at: badge.at, commandId: badge.id, sink: "inapp", recipient: badge.recipient,
                conversationId: badge.conversationId, messageId: "m1", outcome: .undeliverableLocal,
                reason: "not-connected")
            let producer = try KafkaProducer(
                configuration: KafkaClientConfiguration(bootstrapServers: broker.bootstrapServers),
                logger: Logger(label: "test"))
            _ = try await producer.send([
                OutgoingRecord(topic: "notify.commands", key: nil, value: Array(try JSONEncoder().encode(badge))),
                OutgoingRecord(topic: "notify.outcomes", key: nil, value: Array(try JSONEncoder().encode(outcome))),
            ])
            await producer.close()

            let commandsTail = try NotifyProcess([
                "inspect", "--bootstrap", broker.bootstrapServers, "--topic", "notify.commands",
            ])
            defer { commandsTail.kill() }
            #expect(try await commandsTail.exitStatus() == 0)
            let who = "\(badge.recipient.userId)/\(badge.recipient.deviceId)"
            #expect(
                commandsTail.output.contains {
                    $0.hasSuffix(
                        "command push → \(who) (\(badge.recipient.platform.rawValue), \(badge.recipient.provider.rawValue)): badge \(badge.content["badge"]?.intValue ?? -1) (background)"
                    )
                },
                "\(commandsTail.output)")
            let outcomesTail = try NotifyProcess([
                "inspect", "--bootstrap", broker.bootstrapServers, "--topic", "notify.outcomes",
            ])
            defer { outcomesTail.kill() }
            #expect(try await outcomesTail.exitStatus() == 0)
            #expect(
                outcomesTail.output.contains {
                    $0.hasSuffix(
                        "outcome undeliverable-local (not-connected) ← \(who) by inapp, message m1: a push follows if the device has one"
                    )
                },
                "\(outcomesTail.output)")
        }
    }

    @Test("librdkafka's SASL hint for a closed connection says first that the broker may have stopped")
    func closedConnectionHint() {
        let text = librdkafkaText(
            "127.0.0.1:40123/1: Disconnected: verify that security.protocol is correctly configured, broker might require SASL authentication"
        )
        #expect(
            text
                == "127.0.0.1:40123/1: Disconnected: the broker closed the connection (it may have stopped; if it is running, check that security.protocol matches its listener, which may require TLS or SASL)"
        )
        #expect(
            librdkafkaText("Connect to ipv4#127.0.0.1:9 failed: Connection refused")
                == "Connect to ipv4#127.0.0.1:9 failed: Connection refused")
    }
}
