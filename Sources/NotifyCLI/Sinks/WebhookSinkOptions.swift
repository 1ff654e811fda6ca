import ArgumentParser
import NotifySinks

/// `notify sink --kind webhook`: POSTs the selected commands, signed, to a URL.
struct WebhookSinkOptions: SinkKindOptions {
    @Option(help: "webhook: the URL to POST commands to.")
    var url: String?

    var readsSecretsDirectory: Bool { true }

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> WebhookSink {
        let settings = context.settings.sink.webhook
        return try WebhookSink(
            url: try context.required(url, "--url"),
            secrets: try WebhookSecret.load(
                file: shared.secretFile, environmentVariable: "NOTIFY_WEBHOOK_SECRET",
                directory: settings.secretsDirectory),
            legacySignature: settings.legacySignature, selection: try shared.selection(), transport: shared.transport
        )
    }
}
