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

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> APNsSink {
        let token = try APNsProviderToken(
            p8: try Secret.load(file: keyFile, environmentVariable: "NOTIFY_APNS_KEY"),
            keyId: try context.required(keyId, "--key-id"), teamId: try context.required(teamId, "--team-id")
        )
        return try APNsSink(
            endpoint: shared.endpoint ?? "https://api.push.apple.com", providerToken: token, transport: shared.transport
        )
    }
}
