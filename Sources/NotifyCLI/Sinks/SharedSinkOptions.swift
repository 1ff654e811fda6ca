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

    /// The flags given (`--secrets-dir` aside), each with the kinds that read it.
    var givenFlags: [(flag: String, readers: [SinkKind])] {
        let flags: [(flag: String, given: Bool, readers: [SinkKind])] = [
            ("--ca-file", caFile != nil, [.apns, .fcm, .webhook]), ("--endpoint", endpoint != nil, [.apns, .fcm]),
            ("--connections", connections != nil, [.apns]), ("--secret-file", secretFile != nil, [.inapp, .webhook]),
            ("--path", path != nil, [.webhook, .jsonl]), ("--provider", provider != nil, [.webhook, .jsonl]),
        ]
        return flags.filter(\.given).map { ($0.flag, $0.readers) }
    }

    /// These flags as the settings they stand for, for a sink of `kind` (``SinkKindOptions/settingFlags``):
    /// `--endpoint` and `--secret-file` name the kind's own setting (``givenFlags`` says which kinds have one).
    func settingFlags(for kind: SinkKind) -> [(key: String, flag: String, value: String?)] {
        var flags: [(key: String, flag: String, value: String?)] = [("sink.caFile", "--ca-file", caFile)]
        switch kind {
        case .apns:
            flags.append(("sink.apns.endpoint", "--endpoint", endpoint))
            flags.append(("sink.apns.connections", "--connections", connections.map { String($0) }))
        case .fcm: flags.append(("sink.fcm.endpoint", "--endpoint", endpoint))
        case .inapp, .webhook: flags.append(("sink.\(kind.rawValue).secretFile", "--secret-file", secretFile))
        case .jsonl: break
        }
        return flags
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
