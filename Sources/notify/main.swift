import NotifyCLI

await NotifyCommand.main()
