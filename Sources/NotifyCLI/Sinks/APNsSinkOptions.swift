import ArgumentParser
import NotifySinks

/// `notify sink --kind apns`: HTTP/2 to Apple's push service with a provider token signed by a .p8 key.
struct APNsSinkOptions: SinkKindOptions {
    @Option(help: "apns: the .p8 signing key (else env NOTIFY_APNS_KEY).")
    var keyFile: String?

    @Option(help: "apns: the key id (kid).")
    var keyId: String?

    @Option(help: "apns: the team id (iss).")
    var teamId: String?

    var settingFlags: [(key: String, flag: String, value: String?)] {
        [
            ("sink.apns.keyFile", "--key-file", keyFile), ("sink.apns.keyId", "--key-id", keyId),
            ("sink.apns.teamId", "--team-id", teamId),
        ]
    }

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> APNsSink {
        let settings = context.settings.sink.apns
        let token = try APNsProviderToken(
            p8: try Secret.load(file: settings.keyFile, environmentVariable: "NOTIFY_APNS_KEY"),
            keyId: try context.required(settings.keyId, "--key-id", setting: "sink.apns.keyId"),
            teamId: try context.required(settings.teamId, "--team-id", setting: "sink.apns.teamId")
        )
        return try APNsSink(endpoint: settings.endpoint, providerToken: token, transport: context.transport)
    }
}
