import ArgumentParser
import NotifySinks

/// `notify sink --kind webhook`: POSTs the selected commands, signed, to a URL.
struct WebhookSinkOptions: SinkKindOptions {
    @Option(help: "webhook: the URL to POST commands to.")
    var url: String?

    var readsSecretsDirectory: Bool { true }

    var settingFlags: [(key: String, flag: String, value: String?)] { [("sink.webhook.url", "--url", url)] }

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> WebhookSink {
        let settings = context.settings.sink.webhook
        return try WebhookSink(
            url: try context.required(settings.url, "--url", setting: "sink.webhook.url"),
            secrets: try WebhookSecret.load(
                file: settings.secretFile, environmentVariable: "NOTIFY_WEBHOOK_SECRET",
                directory: settings.secretsDirectory),
            legacySignature: settings.legacySignature, selection: try shared.selection(), transport: context.transport
        )
    }
}
