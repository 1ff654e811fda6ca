import ArgumentParser
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyPipeline

/// `notify replay`: both stages over history, into a topic of your choice.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-run the pipeline over the history of the input topics and write the commands to a topic.",
        discussion: """
            State is rebuilt from the beginning of every input topic, with the pipeline's settings (--config, \
            --set, NOTIFY_*); only commands of events within \
            --from/--until are written. Use it to backfill a new sink or to check a change. It reads with \
            its own consumer and commits nothing, so the live consumer group is untouched.
            """
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var schemas: SchemasOption
    @OptionGroup var settings: SettingsOptions
    @OptionGroup var log: LogOptions

    @Option(help: "earliest, or an RFC 3339 time: write commands of events from then on.")
    var from: String = "earliest"

    @Option(help: "An RFC 3339 time: write no commands of events after it.")
    var until: String?

    @Option(name: .customLong("to-topic"), help: "The topic to write the commands to.")
    var toTopic: String

    func run() async throws {
        let start: EventTime? = try from == "earliest" ? nil : Self.time(from, option: "--from")
        let end = try until.map { try Self.time($0, option: "--until") }
        let loaded = try await settings.load(dedicated: [
            ("pipeline.schemas", "--schemas", schemas.schemas), log.dedicatedFlag,
        ])
        loaded.startLogging()
        var logger = Logger(label: "notify.replay")
        logger.logLevel = .warning
        let replay = Replay(
            settings: ReplaySettings(
                client: try await kafka.reachableClient(clientId: "notify-replay"),
                core: try loaded.coreConfiguration(),
                from: start, until: end, targetTopic: toTopic), logger: logger)
        let summary = try await replay.run { StandardOutput.writeErrorLine($0) }
        for rejection in summary.rejected.prefix(20) { StandardOutput.writeErrorLine("replay: refused: \(rejection)") }
        if summary.rejected.count > 20 {
            StandardOutput.writeErrorLine("replay: ... and \(summary.rejected.count - 20) more refused")
        }
        StandardOutput.writeLine(
            "replay: \(summary.recordsRead) records read, \(summary.commandsWritten) commands written to \(toTopic), \(summary.commandsOutsideWindow) outside the window, \(summary.rejected.count) records refused"
        )
    }

    static func time(_ text: String, option: String) throws -> EventTime {
        guard let time = EventTime(rfc3339: text) else {
            throw ValidationError(
                "\(option) \(text): expected earliest or an RFC 3339 time such as 2026-11-22T10:00:00Z")
        }
        return time
    }
}
