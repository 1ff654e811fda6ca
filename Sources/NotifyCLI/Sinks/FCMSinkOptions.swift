import ArgumentParser
import NotifySinks

/// `notify sink --kind fcm`: Firebase Cloud Messaging v1 with a service account's OAuth tokens.
struct FCMSinkOptions: SinkKindOptions {
    @Option(help: "fcm: the service-account JSON (else env NOTIFY_FCM_SERVICE_ACCOUNT).")
    var serviceAccount: String?

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> FCMSink {
        let account = try ServiceAccount(
            json: try Secret.load(file: serviceAccount, environmentVariable: "NOTIFY_FCM_SERVICE_ACCOUNT"))
        return try FCMSink(
            endpoint: shared.endpoint ?? "https://fcm.googleapis.com", account: account, transport: shared.transport)
    }
}
