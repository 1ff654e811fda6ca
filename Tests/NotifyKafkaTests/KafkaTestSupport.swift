import Foundation
import Logging
import NotifyKafka
import Synchronization

/// A logger for tests: warnings and worse only, so test output stays readable.
let testLogger: Logger = {
    var logger = Logger(label: "notify.tests")
    logger.logLevel = .warning
    return logger
}()

/// Runs `body` with a fresh embedded broker that has `topics`, and shuts it down after, also on failure.
func withEmbeddedBroker<T>(
    brokers: Int = 1, topics: [String: Int32], _ body: (EmbeddedBroker) async throws -> T
) async throws -> T {
    try await EmbeddedBroker.withBroker(brokers: brokers, logger: testLogger) { broker in
        for (name, partitions) in topics { try await broker.createTopic(name, partitions: partitions) }
        return try await body(broker)
    }
}

func clientConfiguration(_ broker: EmbeddedBroker, _ properties: [String: String] = [:]) -> KafkaClientConfiguration {
    KafkaClientConfiguration(
        bootstrapServers: broker.bootstrapServers, clientId: "notify-tests", properties: properties)
}

func record(_ topic: String, key: String, value: String, headers: [KafkaHeader] = []) -> OutgoingRecord {
    OutgoingRecord(topic: topic, key: Array(key.utf8), value: Array(value.utf8), headers: headers)
}

extension KafkaRecord {
    var keyString: String? { key.map { String(decoding: $0, as: UTF8.self) } }
    var valueString: String { String(decoding: value, as: UTF8.self) }
}

/// Reads records until `count` have arrived or `timeout` passes.
func collect(_ consumer: KafkaConsumer, count: Int, timeout: Duration = .seconds(30)) async throws -> [KafkaRecord] {
    try await withThrowingTaskGroup(of: [KafkaRecord]?.self) { group in
        group.addTask {
            var records: [KafkaRecord] = []
            for try await batch in consumer.batches {
                records += batch
                if records.count >= count { break }
            }
            return records
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        guard let records = first else { throw TestTimeout(expected: count) }
        return records
    }
}

struct TestTimeout: Error, CustomStringConvertible {
    let expected: Int
    var description: String { "timed out waiting for \(expected) records" }
}

/// Mutable state shared between a test and the tasks it starts.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { body(&$0) }
    }
}
