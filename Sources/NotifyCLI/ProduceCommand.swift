import ArgumentParser
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyService

/// `notify produce --topic T`: JSONL on stdin to a topic, each line validated and keyed first.
struct ProduceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "produce",
        abstract:
            "Send JSON lines from standard input to a topic, each validated and keyed as Schemas/topics.json says.",
        discussion: """
            A line that is not a valid event of the topic is reported on standard error with its line number \
            and not sent; the others are sent. Exits with status 1 if any line was refused. The record's \
            timestamp is the event's "at".
            """
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var schemas: SchemasOption
    @OptionGroup var log: LogOptions

    @Option(help: "The topic to send to.")
    var topic: String

    func run() async throws {
        try log.startLogging()
        let catalog = try schemas.loadTopicCatalog()
        guard let entry = catalog.topic(topic) else {
            throw ValidationError(
                "unknown topic \(topic); the catalog has: \(catalog.topics.map(\.name).joined(separator: ", "))")
        }
        var logger = Logger(label: "notify.produce")
        logger.logLevel = .warning
        let producer = try KafkaProducer(
            configuration: try await kafka.reachableClient(clientId: "notify-produce"), logger: logger)
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
            let event: InputEvent
            do {
                event = try InputEvent.decode(topic: topic.name, value: value)
            } catch {
                throw ValidationError(
                    "\(topic.name): " + problems(of: value, topic: topic.name, first: error).joined(separator: " · "))
            }
            return OutgoingRecord(
                topic: topic.name, key: Array(event.key.utf8), value: value,
                timestampMilliseconds: event.at.milliseconds)
        }
        let json = try CoreJSON.parse(value)
        var field: JSONValue? = json
        for part in topic.key.split(separator: ".") { field = field?[String(part)] }
        guard let key = field?.stringValue else {
            throw ValidationError(
                "\(topic.name): field \"\(topic.key)\": missing or not a string (it is the record key)")
        }
        return OutgoingRecord(topic: topic.name, key: Array(key.utf8), value: value)
    }

    /// Every problem of an event the core refuses, not just the first: an unknown field is reported with
    /// the allowed name nearest to it, taken out, and the event decoded again, until it decodes or fails
    /// otherwise (a missing or wrong field ends the list).
    static func problems(of value: [UInt8], topic: String, first: EventDecodingError) -> [String] {
        var problems: [String] = []
        var error = first
        var json = try? CoreJSON.parse(value)
        while true {
            let allowedMarker = "unknown field (allowed: "
            guard error.problem.hasPrefix(allowedMarker), problems.count < 20, let current = json,
                let trimmed = removing(error.field, from: current)
            else {
                problems.append("field \"\(error.field)\": \(error.problem)")
                return problems
            }
            let allowed = error.problem.dropFirst(allowedMarker.count).dropLast().components(separatedBy: ", ")
            let name = String(error.field.split(separator: ".").last ?? Substring(error.field))
            let suggestion =
                closestMatch(to: name, among: allowed).map { ", did you mean \"\($0)\"?" }
                ?? " (allowed: \(allowed.joined(separator: ", ")))"
            problems.append("field \"\(error.field)\": unknown field\(suggestion)")
            json = trimmed
            do {
                _ = try InputEvent.decode(topic: topic, json: trimmed)
                return problems
            } catch let next {
                error = next
            }
        }
    }

    /// `value` without the member at the dotted `path` (`attachment.foo`; array elements as `devices[1].x`),
    /// or nil when there is no such member.
    private static func removing(_ path: String, from value: JSONValue) -> JSONValue? {
        var parts = path.split(separator: ".", maxSplits: 1).map(String.init)
        let head = parts.removeFirst()
        var key = head
        var index: Int?
        if let open = head.firstIndex(of: "["), head.hasSuffix("]") {
            key = String(head[..<open])
            index = Int(head[head.index(after: open)..<head.index(before: head.endIndex)])
        }
        guard case .object(var members) = value, let member = members[key] else { return nil }
        if parts.isEmpty, index == nil {
            members[key] = nil
            return .object(members)
        }
        var child = member
        if let index {
            guard case .array(var elements) = member, elements.indices.contains(index) else { return nil }
            if parts.isEmpty { return nil }
            guard let trimmed = removing(parts[0], from: elements[index]) else { return nil }
            elements[index] = trimmed
            child = .array(elements)
        } else {
            guard let trimmed = removing(parts[0], from: member) else { return nil }
            child = trimmed
        }
        members[key] = child
        return .object(members)
    }
}
