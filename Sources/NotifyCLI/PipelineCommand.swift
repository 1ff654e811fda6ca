import ArgumentParser
import Kafka
import Logging
import NotifyCore
import NotifyPipeline

/// `notify pipeline`: the stages as a consumer-group member, until SIGINT or SIGTERM.
struct PipelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Run the pipeline stages (fanout, route) as a member of a consumer group.",
        discussion: """
            Start as many instances as you like with the same --group: partitions are split between them and \
            move on join, leave and crash. Each task restores its state from the stage's changelog topic \
            before it processes a record.
            """
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var schemas: SchemasOption

    @Option(help: "Consumer group; each stage joins <group>.<stage>.")
    var group: String = "notify"

    @Option(help: "Stages to run, comma-separated: fanout, route.")
    var stages: String = "fanout,route"

    @Option(help: "How long a message from an unknown sender waits for its identity, in milliseconds.")
    var identityWaitMs: Int64?

    func run() async throws {
        let names = try stages.split(separator: ",").map { name in
            guard let stage = StageName(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("--stages: unknown stage \"\(name)\" (fanout, route)")
            }
            return stage
        }
        var core = try schemas.loadConfiguration()
        if let identityWaitMs { core.identityWaitMilliseconds = identityWaitMs }
        let settings = PipelineSettings(
            client: try kafka.clientConfiguration(clientId: "notify-pipeline"), groupId: group, stages: Set(names), core: core)
        let logger = Logger(label: "notify.pipeline")
        let pipeline = NotifyPipeline(settings: settings, observer: .logging(to: logger), logger: logger)
        try await runUntilTerminated { try await pipeline.run() }
    }
}

extension PipelineObserver {
    /// Logs every decision and command at info level.
    static func logging(to logger: Logger) -> PipelineObserver {
        PipelineObserver(
            onDecisions: { decisions in decisions.forEach { logger.info("\($0)") } },
            onProduced: { _, commands, _ in
                for command in commands {
                    logger.info("command \(command.path.rawValue) to \(command.recipient.userId)/\(command.recipient.deviceId) (\(command.recipient.provider.rawValue)) message \(command.messageId ?? "-")")
                }
            })
    }
}
