/// Every setting of the `notify` commands, typed. Each field is documented in ``SettingsCatalogue``
/// and `docs/configuration.md` under the dotted key given here.
public struct NotifySettings: Sendable, Hashable {
    /// `kafka.*`
    public struct Kafka: Sendable, Hashable {
        /// `kafka.bootstrap`: `HOST:PORT,...`
        public var bootstrap: String
        /// `kafka.connectTimeout`: how long a command waits for the bootstrap servers to answer.
        public var connectTimeout: Duration
        /// `kafka.clientId`
        public var clientId: String
        /// `kafka.groupId`; `nil`: the command's own default group.
        public var groupId: String?
        /// `kafka.properties`: librdkafka properties passed through.
        public var properties: [String: String]
        /// `kafka.maxBatchSize`
        public var maxBatchSize: Int
    }

    /// `pipeline.*`
    public struct Pipeline: Sendable, Hashable {
        /// `pipeline.stages`: `fanout`, `route` or both.
        public var stages: [String]
        /// `pipeline.identityWait`
        public var identityWait: Duration
        /// `pipeline.clientStateMaxAge`
        public var clientStateMaxAge: Duration
        /// `pipeline.backgroundPushInterval`
        public var backgroundPushInterval: Duration
        /// `pipeline.saveInterval`
        public var saveInterval: Duration
        /// `pipeline.lateness`
        public var lateness: Duration
        /// `pipeline.maxEventTimeWait`
        public var maxEventTimeWait: Duration
        /// `pipeline.schemas`: the Schemas directory.
        public var schemasDirectory: String
    }

    /// `thumbnails.*`
    public struct Thumbnails: Sendable, Hashable {
        /// `thumbnails.url`; `nil`: no resolver.
        public var url: String?
        /// `thumbnails.timeout`
        public var timeout: Duration
        /// `thumbnails.backlogLimit`
        public var backlogLimit: Int
    }

    /// `http.*`
    public struct HTTP: Sendable, Hashable {
        /// `http.listen`
        public var listen: HostAndPort
        /// `http.console`
        public var console: Bool
    }

    /// `probes.*`
    public struct Probes: Sendable, Hashable {
        /// `probes.checkInterval`
        public var checkInterval: Duration
        /// `probes.clusterTimeout`
        public var clusterTimeout: Duration
        /// `probes.stuckAfter`
        public var stuckAfter: Duration
    }

    /// `sink.*`
    public struct Sink: Sendable, Hashable {
        public struct APNs: Sendable, Hashable {
            public var endpoint: String
            public var keyFile: String?
            public var keyId: String?
            public var teamId: String?
            public var connections: Int
        }
        public struct FCM: Sendable, Hashable {
            public var endpoint: String
            public var serviceAccountFile: String?
        }
        public struct InApp: Sendable, Hashable {
            public var listen: HostAndPort
            public var secretFile: String?
            /// `sink.inapp.secretsDirectory`: secrets by `kid`.
            public var secretsDirectory: String?
            /// `sink.inapp.clockLeeway`
            public var clockLeeway: Duration
            public var ackTimeout: Duration
        }
        public struct Webhook: Sendable, Hashable {
            public var url: String?
            public var secretFile: String?
            /// `sink.webhook.secretsDirectory`: further secrets, each of which signs.
            public var secretsDirectory: String?
            /// `sink.webhook.legacySignature`: also the deprecated `X-Notify-*` headers.
            public var legacySignature: Bool
        }

        public var concurrency: Int
        public var maxAttempts: Int
        public var retryBaseDelay: Duration
        public var retryMaxDelay: Duration
        public var requestTimeout: Duration
        /// `sink.ledgerRestoreMargin`
        public var ledgerRestoreMargin: Duration
        public var caFile: String?
        public var apns: APNs
        public var fcm: FCM
        public var inapp: InApp
        public var webhook: Webhook
        /// `sink.jsonl.out`
        public var jsonlOut: String?
    }

    public var kafka: Kafka
    public var pipeline: Pipeline
    public var thumbnails: Thumbnails
    public var http: HTTP
    public var probes: Probes
    /// `shutdown.gracePeriod`: the whole budget from SIGTERM to exit.
    public var shutdownGracePeriod: Duration
    /// `log.level`: `trace` … `critical`, as swift-log's `Logger.Level` raw values.
    public var logLevel: String
    /// `log.format`: `text` or `json`.
    public var logFormat: LogFormat
    public var sink: Sink

    /// Reads and checks every setting from `sources` (flags over environment over file over defaults).
    /// - Throws: ``SettingsError`` listing every problem, each with its source and key.
    public static func load(from sources: SettingsSources) async throws -> NotifySettings {
        NotifySettings(try await SettingsLoader.resolve(sources))
    }

    /// The defaults of every setting.
    public static let defaults = NotifySettings(
        Dictionary(
            uniqueKeysWithValues: SettingsCatalogue.all.compactMap { definition in
                definition.defaultValue.map { (definition.key, $0) }
            }))

    /// Builds the struct from checked values (the catalogue guarantees kinds and defaults).
    private init(_ values: [String: SettingValue]) {
        let read = ResolvedSettings(values: values)
        kafka = Kafka(
            bootstrap: read.text("kafka.bootstrap")!, connectTimeout: read.duration("kafka.connectTimeout"),
            clientId: read.text("kafka.clientId")!,
            groupId: read.text("kafka.groupId"), properties: read.properties("kafka.properties"),
            maxBatchSize: read.integer("kafka.maxBatchSize"))
        pipeline = Pipeline(
            stages: read.list("pipeline.stages"), identityWait: read.duration("pipeline.identityWait"),
            clientStateMaxAge: read.duration("pipeline.clientStateMaxAge"),
            backgroundPushInterval: read.duration("pipeline.backgroundPushInterval"),
            saveInterval: read.duration("pipeline.saveInterval"),
            lateness: read.duration("pipeline.lateness"), maxEventTimeWait: read.duration("pipeline.maxEventTimeWait"),
            schemasDirectory: read.text("pipeline.schemas")!)
        thumbnails = Thumbnails(
            url: read.text("thumbnails.url"), timeout: read.duration("thumbnails.timeout"),
            backlogLimit: read.integer("thumbnails.backlogLimit"))
        http = HTTP(listen: read.address("http.listen"), console: read.boolean("http.console"))
        probes = Probes(
            checkInterval: read.duration("probes.checkInterval"),
            clusterTimeout: read.duration("probes.clusterTimeout"),
            stuckAfter: read.duration("probes.stuckAfter"))
        shutdownGracePeriod = read.duration("shutdown.gracePeriod")
        logLevel = read.text("log.level")!
        logFormat = LogFormat(rawValue: read.text("log.format")!)!
        sink = Sink(
            concurrency: read.integer("sink.concurrency"), maxAttempts: read.integer("sink.maxAttempts"),
            retryBaseDelay: read.duration("sink.retryBaseDelay"), retryMaxDelay: read.duration("sink.retryMaxDelay"),
            requestTimeout: read.duration("sink.requestTimeout"),
            ledgerRestoreMargin: read.duration("sink.ledgerRestoreMargin"),
            caFile: read.text("sink.caFile"),
            apns: .init(
                endpoint: read.text("sink.apns.endpoint")!, keyFile: read.text("sink.apns.keyFile"),
                keyId: read.text("sink.apns.keyId"), teamId: read.text("sink.apns.teamId"),
                connections: read.integer("sink.apns.connections")),
            fcm: .init(
                endpoint: read.text("sink.fcm.endpoint")!, serviceAccountFile: read.text("sink.fcm.serviceAccountFile")),
            inapp: .init(
                listen: read.address("sink.inapp.listen"), secretFile: read.text("sink.inapp.secretFile"),
                secretsDirectory: read.text("sink.inapp.secretsDirectory"),
                clockLeeway: read.duration("sink.inapp.clockLeeway"),
                ackTimeout: read.duration("sink.inapp.ackTimeout")),
            webhook: .init(
                url: read.text("sink.webhook.url"), secretFile: read.text("sink.webhook.secretFile"),
                secretsDirectory: read.text("sink.webhook.secretsDirectory"),
                legacySignature: read.boolean("sink.webhook.legacySignature")),
            jsonlOut: read.text("sink.jsonl.out"))
    }
}

/// Typed reads of checked values; a wrong kind here is a catalogue bug, caught by the tests.
private struct ResolvedSettings {
    var values: [String: SettingValue]

    func text(_ key: String) -> String? {
        guard case .text(let value)? = values[key] else { return nil }
        return value
    }

    func integer(_ key: String) -> Int {
        guard case .integer(let value)? = values[key] else { preconditionFailure("\(key) is not an integer setting") }
        return value
    }

    func boolean(_ key: String) -> Bool {
        guard case .boolean(let value)? = values[key] else { preconditionFailure("\(key) is not a boolean setting") }
        return value
    }

    func duration(_ key: String) -> Duration {
        guard case .seconds(let value)? = values[key] else { preconditionFailure("\(key) is not a seconds setting") }
        return .milliseconds(Int64((value * 1000).rounded()))
    }

    func list(_ key: String) -> [String] {
        guard case .list(let value)? = values[key] else { preconditionFailure("\(key) is not a list setting") }
        return value
    }

    func properties(_ key: String) -> [String: String] {
        guard case .properties(let value)? = values[key] else { return [:] }
        return value
    }

    func address(_ key: String) -> HostAndPort {
        guard let text = text(key), case .success(let address) = HostAndPort.parse(text) else {
            preconditionFailure("\(key) is not an address setting")
        }
        return address
    }
}
