import ArgumentParser

/// The `notify` executable: every subcommand of the command line (README, "The command line").
public struct NotifyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "An event-sourced notification pipeline on Kafka.",
        subcommands: [
            DevCommand.self,
            ConfigCommand.self,
            BrokerCommand.self,
            RenderCommand.self,
            PipelineCommand.self,
            ProduceCommand.self,
            InspectCommand.self,
            TopicsCommand.self,
            ReplayCommand.self,
            SinkCommand.self,
        ]
    )

    public init() {}
}
