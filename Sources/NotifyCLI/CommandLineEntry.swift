import ArgumentParser

extension NotifyCommand {
    /// Parses the process arguments and runs the chosen subcommand, awaiting it when it is async.
    ///
    /// `main.swift` calls this instead of `main()`: in top-level code Swift picks ParsableCommand's
    /// synchronous `main()`, which refuses an async root command.
    public static func runFromCommandLine() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
