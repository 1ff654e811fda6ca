import ArgumentParser
import NotifySinks

/// `notify sink --kind fcm`: Firebase Cloud Messaging v1 with a service account's OAuth tokens.
struct FCMSinkOptions: SinkKindOptions {
    @Option(help: "fcm: the service-account JSON (else env NOTIFY_FCM_SERVICE_ACCOUNT).")
    var serviceAccount: String?

    var settingFlags: [(key: String, flag: String, value: String?)] {
        [("sink.fcm.serviceAccountFile", "--service-account", serviceAccount)]
    }

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> FCMSink {
        let settings = context.settings.sink.fcm
        let account = try ServiceAccount(
            json: try Secret.load(file: settings.serviceAccountFile, environmentVariable: "NOTIFY_FCM_SERVICE_ACCOUNT"))
        return try FCMSink(endpoint: settings.endpoint, account: account, transport: context.transport)
    }
}
