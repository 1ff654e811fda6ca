import ArgumentParser
import NotifyCLI

/// Calls the asynchronous entry point of `command` (a plain `main()` call here
/// would pick the synchronous one, which cannot run async subcommands).
func runAsync<Command: AsyncParsableCommand>(_ command: Command.Type) async {
    await command.main()
}

await runAsync(NotifyCommand.self)
