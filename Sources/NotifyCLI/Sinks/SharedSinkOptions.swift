import ArgumentParser
import NotifyCore
import NotifySinks

/// The `notify sink` flags several kinds read: TLS and endpoint of the HTTP kinds, the shared
/// secret and secrets directory, and the command selection of webhook and jsonl.
struct SharedSinkOptions: ParsableArguments {
    @Option(help: "A PEM file of CA certificates to trust instead of the system's (private CAs, tests).")
    var caFile: String?

    @Option(help: "apns, fcm: the service's base URL (default the production endpoint).")
    var endpoint: String?

    @Option(help: "apns: HTTP/2 connections to multiplex requests over.")
    var connections = 2

    @Option(help: "inapp, webhook: the shared secret's file (else env NOTIFY_INAPP_SECRET / NOTIFY_WEBHOOK_SECRET).")
    var secretFile: String?

    @Option(
        help:
            "inapp: a directory of token secrets, each file's name its kid; webhook: a directory of further secrets (setting sink.KIND.secretsDirectory)."
    )
    var secretsDir: String?

    @Option(help: "webhook, jsonl: only commands of this path (push or local).")
    var path: String?

    @Option(help: "webhook, jsonl: only commands for this provider (apns or fcm).")
    var provider: String?

    /// How the HTTP kinds (apns, fcm, webhook) reach their service.
    var transport: HTTPTransportConfiguration {
        HTTPTransportConfiguration(caFile: caFile, connections: connections)
    }

    /// The commands `--path` and `--provider` select (all when neither is given).
    func selection() throws -> CommandSelection {
        var selection = CommandSelection.all
        if let path {
            guard let value = DeliveryPath(rawValue: path) else {
                throw ValidationError("--path must be push or local.")
            }
            selection.paths = [value]
        }
        if let provider {
            guard let value = PushProvider(rawValue: provider) else {
                throw ValidationError("--provider must be apns or fcm.")
            }
            selection.providers = [value]
        }
        return selection
    }
}
