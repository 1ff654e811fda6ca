import NotifyCLI

// Parses, runs and exits as ArgumentParser's `main()` does; a command that logs in JSON reports the
// error that ends it as a JSON line too.
await NotifyCommand.execute()
