import ArgumentParser
import Foundation
import Kafka
import Logging
import NotifyCore

/// `notify produce --topic T`: JSONL on stdin to a topic, each line validated and keyed first.
struct ProduceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "produce",
        abstract: "Send JSON lines from standard input to a topic, each validated and keyed as Schemas/topics.json says.",
        discussion: """
            A line that is not a valid event of the topic is reported on standard error with its line number \
            and not sent; the others are sent. Exits with status 1 if any line was refused. The record's \
            timestamp is the event's "at".
            """
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var schemas: SchemasOption

    @Option(help: "The topic to send to.")
    var topic: String

    func run() async throws {
        let catalog = try schemas.loadTopicCatalog()
        guard let entry = catalog.topic(topic) else {
            throw ValidationError("unknown topic \(topic); the catalog has: \(catalog.topics.map(\.name).joined(separator: ", "))")
        }
        var logger = Logger(label: "notify.produce")
        logger.logLevel = .warning
        let producer = try KafkaProducer(configuration: try kafka.clientConfiguration(clientId: "notify-produce"), logger: logger)
        var refused = 0
        var sent = 0
        var pending: [OutgoingRecord] = []
        var lineNumber = 0
        while let line = readLine(strippingNewline: true) {
            lineNumber += 1
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            do {
                pending.append(try ProducedLine.record(line, topic: entry))
            } catch {
                refused += 1
                StandardOutput.writeErrorLine("line \(lineNumber): \(error) (not sent)")
            }
            if pending.count >= 1_000 {
                sent += try await producer.send(pending).count
                pending = []
            }
        }
        sent += try await producer.send(pending).count
        await producer.close()
        StandardOutput.writeErrorLine("sent \(sent) record(s) to \(topic)\(refused > 0 ? ", refused \(refused)" : "")")
        if refused > 0 { throw ExitCode(1) }
    }
}

/// A line of `notify produce` made into a record.
enum ProducedLine {
    /// Validates `line` as a value of `topic` and keys it: events the core reads
    /// are decoded strictly; other topics' values must be JSON objects with the key field.
    static func record(_ line: String, topic: TopicCatalog.Topic) throws -> OutgoingRecord {
        let value = Array(line.utf8)
        if InputEvent.topics.contains(topic.name) {
            let event = try InputEvent.decode(topic: topic.name, value: value)
            return OutgoingRecord(topic: topic.name, key: Array(event.key.utf8), value: value,
                                  timestampMilliseconds: event.at.milliseconds)
        }
        let json = try CoreJSON.parse(value)
        var field: JSONValue? = json
        for part in topic.key.split(separator: ".") { field = field?[String(part)] }
        guard let key = field?.stringValue else {
            throw ValidationError("\(topic.name): field \"\(topic.key)\": missing or not a string (it is the record key)")
        }
        return OutgoingRecord(topic: topic.name, key: Array(key.utf8), value: value)
    }
}
