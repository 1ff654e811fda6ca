import ArgumentParser

/// The kinds `notify sink --kind` runs. A new kind is a case here and its line in ``SinkKindOptionGroups``.
enum SinkKind: String, ExpressibleByArgument, CaseIterable {
    case apns, fcm, inapp, webhook, jsonl
}

/// Every kind's own flags, one group per kind; `notify sink` reads those of the kind it runs.
struct SinkKindOptionGroups: ParsableArguments {
    @OptionGroup var apns: APNsSinkOptions
    @OptionGroup var fcm: FCMSinkOptions
    @OptionGroup var inapp: InAppSinkOptions
    @OptionGroup var webhook: WebhookSinkOptions
    @OptionGroup var jsonl: JSONLSinkOptions

    /// The flags and sink construction of `kind`.
    func options(for kind: SinkKind) -> any SinkKindOptions {
        switch kind {
        case .apns: apns
        case .fcm: fcm
        case .inapp: inapp
        case .webhook: webhook
        case .jsonl: jsonl
        }
    }

    /// The kinds that read `--secrets-dir`, for messages: "inapp or webhook".
    var kindsReadingSecretsDirectory: String {
        SinkKind.allCases.filter { options(for: $0).readsSecretsDirectory }.map(\.rawValue).joined(separator: " or ")
    }
}
