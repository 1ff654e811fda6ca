import ArgumentParser
import Crypto
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyPipeline
import NotifyRecords
import NotifySinkStandIns
import NotifySinks
import Synchronization

/// `notify-bench sink --kind apns`: the APNs sink (runtime and kind) reading prefilled commands
/// from an embedded broker and sending them over HTTP/2 with TLS to a loopback APNs stand-in
/// that checks the provider token and headers but keeps nothing. Throughput is counted from the
/// first attempt to the last answer; the latency is one attempt's, request to answer.
/// `--kind jsonl` (to /dev/null) measures the runtime and Kafka alone, for comparison.
struct SinkBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract: "Deliveries per second (and p99 latency) of a sink against a local stand-in."
    )

    @Option(help: "The sink kind: apns, or jsonl (to /dev/null: the runtime and Kafka alone).")
    var kind = "apns"

    @Option(help: "Notifications to deliver.")
    var count = 50_000

    @Option(help: "Distinct devices (commands of one device go one at a time).")
    var devices = 10_000

    @Option(help: "HTTP/2 connections to the stand-in.")
    var connections = 2

    /// Each place is held from the request until the outcome's acknowledgement (about 7 ms on
    /// loopback, most of it the outcome producer's linger and the broker), so 64 places cap a sink
    /// near 9,000/s however fast the server answers; 256 measures the sink, 512 (the runtime's
    /// default, meant for APNs' real round trips) adds in-process queueing to the latency.
    @Option(
        help:
            "Attempts under way at once; each holds its place until its outcome is acknowledged (the runtime's default is 512)."
    )
    var maxInFlight = 256

    func validate() throws {
        guard kind == "apns" || kind == "jsonl" else { throw ValidationError("--kind must be apns or jsonl") }
        guard count > 0, devices > 0 else { throw ValidationError("--count and --devices must be positive") }
    }

    func run() async throws {
        var logger = Logger(label: "notify.bench.sink")
        logger.logLevel = .error
        let authority = try await TestCertificateAuthority.make()
        defer { authority.remove() }
        let timings = try await EmbeddedBroker.withBroker(logger: logger) { broker in
            for topic in ["notify.commands", "notify.outcomes"] { try await broker.createTopic(topic, partitions: 8) }
            try await broker.createTopic("notify.dlq", partitions: 1)
            let kafka = KafkaClientConfiguration(bootstrapServers: broker.bootstrapServers, clientId: "notify-bench")
            try await prefill(kafka: kafka, logger: logger)

            if kind == "jsonl" {
                return try await measure(try JSONLSink(path: "/dev/null"), kafka: kafka, logger: logger)
            } else {
                let key = P256.Signing.PrivateKey()
                let apns = APNsStandIn(
                    publicKey: key.publicKey, keyId: "BENCHKEY01", teamId: "BENCHTEAM1", keepsRequests: false)
                let timings = try await apns.serve(tls: authority, logger: logger) { port in
                    let sink = try APNsSink(
                        endpoint: "https://127.0.0.1:\(port)",
                        providerToken: try APNsProviderToken(
                            p8: Secret(bytes: Array(key.pemRepresentation.utf8), origin: "bench"), keyId: "BENCHKEY01",
                            teamId: "BENCHTEAM1"),
                        transport: HTTPTransportConfiguration(caFile: authority.caFile, connections: connections)
                    )
                    return try await measure(sink, kafka: kafka, logger: logger)
                }
                guard apns.ledger.count == count else {
                    throw ValidationError("only \(apns.ledger.count) of \(count) notifications arrived")
                }
                return timings
            }
        }
        let seconds = timings.elapsed.seconds
        print(
            "sink \(kind): "
                + String(
                    format: "%d notifications in %.2f s = %.0f notifications/s, p99 %.1f ms",
                    count, seconds, Double(count) / seconds, timings.p99.seconds * 1000))
    }

    /// Runs `sink` under a runtime until it has delivered `count` commands.
    private func measure(_ sink: any NotificationSink, kafka: KafkaClientConfiguration, logger: Logger) async throws
        -> TimedSink.Summary
    {
        let timed = TimedSink(sink, expected: count)
        let runtime = SinkRuntime(
            sink: timed, configuration: SinkRuntimeConfiguration(kafka: kafka, maxInFlight: maxInFlight), logger: logger
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await runtime.run() }
            await timed.waitForDeliveries(count, timeout: .seconds(600))
            runtime.stop()
            try await group.waitForAll()
        }
        return timed.summary()
    }

    /// Writes `count` commands for `devices` devices to notify.commands, each with a `traceparent`.
    private func prefill(kafka: KafkaClientConfiguration, logger: Logger) async throws {
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        let encoder = JSONEncoder()
        let now = Date()
        let expiresAt = now.addingTimeInterval(3600).formatted(.iso8601)
        var records: [OutgoingRecord] = []
        for index in 0..<count {
            let device = index % devices
            let id = "bench-\(index)"
            let command = NotificationCommand(
                id: id, at: now.formatted(.iso8601), path: .push,
                recipient: Recipient(
                    userId: "user-\(device)", deviceId: "device-\(device)", platform: .ios, provider: .apns),
                conversationId: "conversation-\(device % 97)", messageId: "message-\(index)", expiresAt: expiresAt,
                content: .object(["title": .string("Ana"), "body": .string("message \(index)")]),
                apns: APNsRendering(
                    token: String(format: "%064x", device),
                    headers: ["apns-push-type": "alert", "apns-priority": "10", "apns-topic": "com.example.chat"],
                    payload: .object([
                        "aps": .object([
                            "alert": .object(["title": .string("Ana"), "body": .string("message \(index)")])
                        ]),
                        "talkroom-id": .string("conversation-\(device % 97)"),
                    ])
                )
            )
            // As the route stage writes them: every command carries its message's trace.
            records.append(
                OutgoingRecord(
                    topic: "notify.commands", key: Array("user-\(device)".utf8),
                    value: Array(try encoder.encode(command)),
                    headers: [TraceContext.start().kafkaHeader]))
            if records.count == 10_000 {
                _ = try await producer.send(records)
                records.removeAll(keepingCapacity: true)
            }
        }
        if !records.isEmpty { _ = try await producer.send(records) }
        await producer.close()
    }
}

/// Wraps a sink and times each attempt.
final class TimedSink: NotificationSink {
    struct Summary: Sendable {
        var elapsed: Duration
        var p99: Duration
    }

    private struct State {
        var first: ContinuousClock.Instant?
        var last: ContinuousClock.Instant?
        var latencies: [Duration] = []
        var delivered = 0
        /// Waits for `delivered` to reach `count` (one waiter; no wake-up per delivery).
        var waiter: (count: Int, done: CheckedContinuation<Void, Never>)?
    }

    private let inner: any NotificationSink
    private let clock = ContinuousClock()
    private let state: Mutex<State>

    init(_ inner: any NotificationSink, expected: Int) {
        self.inner = inner
        var state = State()
        state.latencies.reserveCapacity(expected)
        self.state = Mutex(state)
    }

    var kind: String { inner.kind }

    func accepts(_ command: NotificationCommand) -> Bool { inner.accepts(command) }

    func deliver(_ delivery: Delivery) async -> DeliveryResult {
        let started = clock.now
        let result = await inner.deliver(delivery)
        let ended = clock.now
        let reached = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.first == nil { state.first = started }
            state.last = ended
            state.latencies.append(ended - started)
            guard result == .delivered else { return nil }
            state.delivered += 1
            guard let waiter = state.waiter, state.delivered >= waiter.count else { return nil }
            state.waiter = nil
            return waiter.done
        }
        reached?.resume()
        return result
    }

    func shutdown() async { await inner.shutdown() }

    /// Returns once `count` attempts were delivered, or after `timeout`.
    func waitForDeliveries(_ count: Int, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let reached = self.state.withLock { state -> Bool in
                        if state.delivered >= count { return true }
                        state.waiter = (count, continuation)
                        return false
                    }
                    if reached { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            // Release the waiter left behind by the timeout.
            state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter?.done
            }?.resume()
            group.cancelAll()
        }
    }

    func summary() -> Summary {
        state.withLock { state in
            let sorted = state.latencies.sorted()
            let p99 = sorted.isEmpty ? .zero : percentile(sorted, 0.99)
            return Summary(elapsed: (state.last ?? clock.now) - (state.first ?? clock.now), p99: p99)
        }
    }
}
