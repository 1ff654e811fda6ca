import NotifyCLI

await NotifyCommand.runFromCommandLine()
