import ArgumentParser
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyService

/// `notify inspect --topic T`: a readable tail of a topic.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print the last records of a topic readably (and, with --follow, the new ones as they come)."
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var log: LogOptions

    @Option(help: "The topic to read.")
    var topic: String

    @Option(help: "How many of the newest records of each partition to show.")
    var last: Int64 = 10

    @Flag(help: "Keep printing new records until Ctrl-C.")
    var follow = false

    func run() async throws {
        try log.startLogging()
        var logger = Logger(label: "notify.inspect")
        logger.logLevel = .error
        let (client, topics) = try await kafka.reachableCluster(clientId: "notify-inspect")
        guard topics.contains(topic) else { throw CommandFailure(Self.unknownTopic(topic, among: topics)) }
        let admin = try KafkaAdmin(configuration: client, logger: logger)
        guard let metadata = try await admin.metadata(of: topic) else {
            throw CommandFailure(Self.unknownTopic(topic, among: topics))
        }
        var starts: [TopicPartition: KafkaOffset] = [:]
        var ends: [TopicPartition: Int64] = [:]
        for partition in 0..<Int32(metadata.partitionCount) {
            let topicPartition = TopicPartition(topic: topic, partition: partition)
            let (low, high) = try await admin.watermarks(topicPartition)
            starts[topicPartition] = .offset(max(low, high - last))
            if high > max(low, high - last) { ends[topicPartition] = high }
        }
        guard follow || !ends.isEmpty else {
            StandardOutput.writeErrorLine("\(topic): no records")
            return
        }
        let consumer = try KafkaConsumer(
            configuration: .init(client: client, groupId: "notify-inspect"), logger: logger)
        try consumer.assign(starts)
        let follow = follow
        let lastOffsets = ends
        try await runUntilTerminated {
            var remaining = Set(lastOffsets.keys)
            for try await batch in consumer.batches {
                for record in batch {
                    // Stage 1's progress marks on notify.fanout carry no value: nothing to show.
                    if !record.isProgressMark {
                        StandardOutput.writeLine(RecordSummary.line(for: record))
                    }
                    if record.offset >= (lastOffsets[record.topicPartition] ?? .max) - 1 {
                        remaining.remove(record.topicPartition)
                    }
                }
                if !follow && remaining.isEmpty { break }
            }
        }
        await consumer.close()
    }

    /// The message of a topic the cluster does not have, with the nearest one it has.
    static func unknownTopic(_ topic: String, among topics: Set<String>) -> String {
        let suggestion =
            closestMatch(to: topic, among: topics.filter { !$0.hasPrefix("__") }.sorted()).map {
                "; did you mean \($0)?"
            } ?? ""
        return "the topic \(topic) does not exist\(suggestion)"
    }
}

/// One readable line per record.
enum RecordSummary {
    static func line(for record: KafkaRecord) -> String {
        let time = record.timestampMilliseconds.map { EventTime(milliseconds: $0).rfc3339 } ?? "-"
        let key = record.key.map { String(decoding: $0, as: UTF8.self) } ?? "-"
        let headers = record.headers.map {
            "\($0.name)=\($0.value.map { String(decoding: $0, as: UTF8.self) } ?? "null")"
        }
        var line = "\(record.topic)[\(record.partition)]@\(record.offset) \(time) key=\(key)"
        if !headers.isEmpty { line += " headers{\(headers.joined(separator: ", "))}" }
        return line + " " + describe(record)
    }

    private static func describe(_ record: KafkaRecord) -> String {
        guard let json = try? CoreJSON.parse(record.value) else {
            return "(\(record.value.count) bytes, not JSON)"
        }
        let decoder = JSONDecoder()
        switch json["type"]?.stringValue {
        case "notification.command":
            if let command = try? decoder.decode(NotificationCommand.self, from: Data(record.value)) {
                return "command \(DevLine.describe(command))"
            }
        case "notification.outcome":
            if let outcome = try? decoder.decode(NotificationOutcome.self, from: Data(record.value)) {
                return "outcome \(DevLine.describe(outcome))"
            }
        default:
            if case .event(_, _, let type, let summary, _, _, _) = ConsoleEntry.record(
                topic: record.topic, key: nil, value: record.value),
                InputEvent.topics.contains(record.topic)
            {
                return "\(type): \(summary)"
            }
        }
        return String(decoding: CoreJSON.encode(json), as: UTF8.self)
    }
}
