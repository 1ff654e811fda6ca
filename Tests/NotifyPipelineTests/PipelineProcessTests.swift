import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

/// `notify pipeline` as real processes: killed with SIGKILL, added and removed while records flow.
@Suite(.serialized) struct PipelineProcessTests {
    /// 30 conversations, each from its own sender to its own recipient with one phone.
    static let pairs = 30

    static func setup() -> [ScenarioEvent] {
        (0..<pairs).flatMap { index in
            [
                Scenario.identity("sender-\(index)", "Sender \(index)", at: 0),
                Scenario.identity("recipient-\(index)", "Recipient \(index)", at: 0),
                Scenario.conversation("pair-\(index)", members: ["sender-\(index)", "recipient-\(index)"]),
                Scenario.phone("recipient-\(index)"),
            ]
        }
    }

    /// `count` messages spread round-robin over the conversations, in event-time order.
    static func messages(_ range: Range<Int>) -> [ScenarioEvent] {
        range.map { number in
            let index = number % pairs
            return Scenario.message(
                "m\(number)", in: "pair-\(index)", from: "sender-\(index)", "message \(number)",
                at: 10 + Double(number) / 100)
        }
    }

    @Test func killedInstanceLosesNothingAndRepeatsOnlyIdenticalCommands() async throws {
        let configuration = try testCoreConfiguration()
        let all = Self.setup() + Self.messages(0..<600)
        let expected = try rendered(all, configuration: configuration)
        try await withPipelineBroker { broker in
            try await produce(Self.setup(), to: broker)
            let first = try PipelineProcess(broker: broker)
            defer { first.kill() }
            let feeding = Task { try await feed(Self.messages(0..<600), to: broker, chunks: 12) }
            _ = try await readCommands(from: broker) { $0.count >= 150 }
            await first.stop(with: SIGKILL)
            let second = try PipelineProcess(broker: broker)
            defer { second.kill() }
            try await feeding.value
            let commands = try await readCommands(from: broker, timeout: .seconds(120)) { commands in
                Set(commands.compactMap(\.messageId)).count >= 600
            }
            await second.stop(with: SIGTERM)
            try checkAgainstReference(commands, expected: expected)
        }
    }

    @Test func instancesAddedAndKilledMakeTheSingleInstanceCommands() async throws {
        let configuration = try testCoreConfiguration()
        let all = Self.setup() + Self.messages(0..<660)
        let expected = try rendered(all, configuration: configuration)
        try await withPipelineBroker { broker in
            try await produce(Self.setup(), to: broker)
            let one = try PipelineProcess(broker: broker)
            let two = try PipelineProcess(broker: broker)
            defer {
                one.kill()
                two.kill()
            }
            try await feed(Self.messages(0..<200), to: broker, chunks: 4)
            _ = try await readCommands(from: broker) { Set($0.compactMap(\.messageId)).count >= 100 }
            let three = try PipelineProcess(broker: broker)
            defer { three.kill() }
            try await feed(Self.messages(200..<400), to: broker, chunks: 4)
            _ = try await readCommands(from: broker, timeout: .seconds(90)) {
                Set($0.compactMap(\.messageId)).count >= 300
            }
            await one.stop(with: SIGKILL)
            try await feed(Self.messages(400..<600), to: broker, chunks: 4)
            _ = try await readCommands(from: broker, timeout: .seconds(120)) {
                Set($0.compactMap(\.messageId)).count >= 600
            }
            await two.stop(with: SIGTERM)
            // The last messages are processed once three owns every partition, that is once the
            // group has settled after two left. (The embedded broker refuses commits while a group
            // rebalances, where Apache Kafka takes them from the current generation, so SIGTERM in
            // the middle of a rebalance would prove nothing about our commit.)
            try await feed(Self.messages(600..<660), to: broker, chunks: 1)
            let commands = try await readCommands(from: broker, timeout: .seconds(120)) { commands in
                Set(commands.compactMap(\.messageId)).count >= 660
            }
            await three.stop(with: SIGTERM)
            try checkAgainstReference(commands, expected: expected)
            // SIGTERM left the group with every processed offset committed.
            let partitions = (0..<Int32(4)).map { TopicPartition(topic: Topic.messages, partition: $0) }
            let admin = try KafkaAdmin(configuration: client(broker), logger: testLogger)
            let group = try KafkaConsumer(
                configuration: .init(client: client(broker), groupId: "notify-process-tests.fanout"), logger: testLogger
            )
            let committed = try await group.committed(partitions)
            await group.close()
            for partition in partitions {
                let high = try await admin.watermarks(partition).high
                #expect(
                    committed[partition] == high,
                    "\(partition): committed \(String(describing: committed[partition])), end \(high)")
            }
        }
    }
}

/// Produces the events in `chunks` pieces, a little apart, so instances come and go while they flow.
private func feed(_ events: [ScenarioEvent], to broker: EmbeddedBroker, chunks: Int) async throws {
    let size = (events.count + chunks - 1) / chunks
    for start in stride(from: 0, to: events.count, by: size) {
        try await produce(Array(events[start..<min(events.count, start + size)]), to: broker)
        try await Task.sleep(for: .milliseconds(300))
    }
}

/// A `notify pipeline` process of the built executable.
final class PipelineProcess: Sendable {
    private let process: Process

    /// Starts `notify pipeline` on `broker` in `group`, with `arguments` after the usual ones (`--stages`,
    /// `--set`), its HTTP endpoints at `httpListen` and `environment` added to the test's; its log goes
    /// to `log` when given.
    convenience init(
        broker: EmbeddedBroker, group: String = "notify-process-tests", arguments: [String] = [],
        httpListen: String = "127.0.0.1:0", environment: [String: String] = [:], log: String? = nil
    ) throws {
        try self.init(
            notify: [
                "pipeline", "--bootstrap", broker.bootstrapServers, "--group", group,
                "--schemas", repositoryRoot.appendingPathComponent("Schemas").path,
                "--http-listen", httpListen,
            ] + arguments, environment: environment, log: log)
    }

    /// Starts `notify` with `arguments` (any command) and `environment` added to the test's. Its
    /// standard error (its log) goes to the file `log`, or else to a file of its own in the directory
    /// `NOTIFY_TEST_PROCESS_LOGS` names, or else nowhere.
    init(notify arguments: [String], environment: [String: String] = [:], log: String? = nil) throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("notify")
        let process = Process()
        process.executableURL =
            FileManager.default.isExecutableFile(atPath: executable.path)
            ? executable : repositoryRoot.appendingPathComponent(".build/debug/notify")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        process.standardOutput = FileHandle.nullDevice
        let logPath =
            log
            ?? ProcessInfo.processInfo.environment["NOTIFY_TEST_PROCESS_LOGS"].map {
                "\($0)/\(arguments.first ?? "notify")-\(UUID().uuidString.prefix(8)).log"
            }
        if let logPath {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: logPath)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try EmbeddedBroker.startingChildProcess { try process.run() }
        self.process = process
    }

    /// Sends `signal` (SIGKILL: no chance to finish or commit anything; SIGTERM: the clean exit)
    /// and waits, without holding a thread, until the process has exited.
    func stop(with signal: Int32) async {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
        while process.isRunning, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
    }

    /// Sends `signal` without waiting for anything (SIGSTOP pauses the process, SIGCONT resumes it).
    func send(_ signal: Int32) {
        if process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    /// SIGKILL without waiting: the clean-up after a failure.
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}
