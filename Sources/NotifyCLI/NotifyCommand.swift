import ArgumentParser
import NotifyBuild

/// The `notify` executable: every subcommand of the command line (README, "The command line").
public struct NotifyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "An event-sourced notification pipeline on Kafka.",
        version: NotifyCommand.versionText,
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

    /// What `notify --version` prints: the version and the git commit of the build.
    static let versionText = "notify \(NotifyBuild.version) (commit \(NotifyBuild.commit))"

    public init() {}
}
