import ArgumentParser

/// The `notify` executable: every subcommand of the design brief's command line.
public struct NotifyCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "An event-sourced notification pipeline on Kafka.",
        subcommands: [
            SinkCommand.self,
        ]
    )

    public init() {}
}
