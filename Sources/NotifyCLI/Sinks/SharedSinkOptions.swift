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

    @Option(help: "apns: HTTP/2 connections to multiplex requests over (sink.apns.connections; default 2).")
    var connections: Int?

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

    /// One shared flag: its value if given, the kinds that read it, and the setting it stands for in
    /// such a kind (`nil`: none, the kind reads the flag itself).
    private struct SharedFlag {
        var flag: String
        var value: String?
        var readers: [SinkKind]
        var setting: (SinkKind) -> String?
    }

    /// Every shared flag but `--secrets-dir` (each kind says whether it reads that one).
    private var sharedFlags: [SharedFlag] {
        [
            SharedFlag(flag: "--ca-file", value: caFile, readers: [.apns, .fcm, .webhook]) { _ in "sink.caFile" },
            SharedFlag(flag: "--endpoint", value: endpoint, readers: [.apns, .fcm]) { "sink.\($0.rawValue).endpoint" },
            SharedFlag(flag: "--connections", value: connections.map { String($0) }, readers: [.apns]) { _ in
                "sink.apns.connections"
            },
            SharedFlag(flag: "--secret-file", value: secretFile, readers: [.inapp, .webhook]) {
                "sink.\($0.rawValue).secretFile"
            },
            SharedFlag(flag: "--path", value: path, readers: [.webhook, .jsonl]) { _ in nil },
            SharedFlag(flag: "--provider", value: provider, readers: [.webhook, .jsonl]) { _ in nil },
        ]
    }

    /// The flags given (`--secrets-dir` aside), each with the kinds that read it.
    var givenFlags: [(flag: String, readers: [SinkKind])] {
        sharedFlags.filter { $0.value != nil }.map { ($0.flag, $0.readers) }
    }

    /// The flags `kind` reads as the settings they stand for (``SinkKindOptions/settingFlags``).
    func settingFlags(for kind: SinkKind) -> [(key: String, flag: String, value: String?)] {
        sharedFlags.compactMap { shared in
            guard shared.readers.contains(kind), let key = shared.setting(kind) else { return nil }
            return (key, shared.flag, shared.value)
        }
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
