import NotifyCore

/// Every setting of every `notify` command, in the order the reference lists them.
///
/// This list is the single source of truth: loading, `notify config check` and
/// `docs/configuration.md` are all derived from it.
public enum SettingsCatalogue {
    public static let all: [SettingDefinition] = [
        // Kafka
        .init(
            "kafka.bootstrap", .addressList, default: .text("127.0.0.1:9092"), flag: "--bootstrap",
            environmentAliases: ["NOTIFY_BOOTSTRAP"],
            "Kafka bootstrap servers."),
        .init(
            "kafka.connectTimeout", .seconds(0.1...600), default: .seconds(10), flag: "--connect-timeout",
            environmentAliases: ["NOTIFY_CONNECT_TIMEOUT"],
            "How long a command waits for the bootstrap servers to answer before it fails, naming them."),
        .init(
            "kafka.clientId", .text, default: .text("notify"),
            "The `client.id` librdkafka reports to the brokers."),
        .init(
            "kafka.groupId", .text, flag: "--group",
            "Consumer group. Unset: the command's own (`notify` for the pipeline, whose stages join `GROUP.fanout` and `GROUP.route`; `notify-sink-KIND` for a sink)."
        ),
        .init(
            "kafka.properties", .properties, default: .properties([:]), flag: "-X",
            "Any librdkafka property (`security.protocol`, `sasl.*`, `ssl.*`, ...), passed through unchanged to every client that takes it (consumer-only properties skip producers, producer-only ones skip consumers). Layers merge name by name."
        ),
        .init(
            "kafka.maxBatchSize", .integer(1...100_000), default: .integer(1000),
            "Most records handed to a stage or sink in one batch."),
        // Pipeline
        .init(
            "pipeline.stages", .list(allowed: ["fanout", "route"]), default: .list(["fanout", "route"]),
            flag: "--stages",
            "The stages `notify pipeline` runs in this process."),
        .init(
            "pipeline.identityWait", .seconds(0...60),
            default: .seconds(Double(CoreConfiguration.defaultIdentityWaitMilliseconds) / 1000),
            "How long a message from a sender whose identity is unknown waits for `chat.identities` before falling back (rule 9)."
        ),
        .init(
            "pipeline.clientStateMaxAge", .seconds(1...86_400),
            default: .seconds(Double(CoreConfiguration.defaultClientStateMaxAgeMilliseconds) / 1000),
            "A device's foreground/background state older than this counts as unknown, so it gets a push (rule 7)."),
        .init(
            "pipeline.backgroundPushInterval", .seconds(0...3600),
            default: .seconds(Double(CoreConfiguration.defaultBackgroundPushIntervalMilliseconds) / 1000),
            "Least time between two background (badge) pushes to one device; pushes in between are coalesced (rule 12)."
        ),
        .init(
            "pipeline.saveInterval", .seconds(0.05...300), default: .seconds(5),
            "How long each stage task gathers state changes before it writes them to its changelog (one record per changed key, however often it changed) and stores its input offsets. Longer: less changelog traffic and work; after a crash, up to this much input is processed again, giving the same commands with the same ids, which sinks deliver once (rules 15, 16)."
        ),
        .init(
            "pipeline.lateness", .seconds(0...10), default: .seconds(0.01),
            "How much later than the other inputs of its time a record may reach Kafka and still be folded in event-time order (docs/operations.md, \"Event time\"). Each stage waits at least this long for a record while its inputs are quiet: more tolerance costs as much latency. `notify_event_time_late_total` counts the records folded out of that order."
        ),
        .init(
            "pipeline.maxEventTimeWait", .seconds(0.1...600), default: .seconds(30),
            "The longest a record waits for every input of its stage (in stage 2: every stage-1 task's progress mark) to pass its event time; then it is folded anyway and counted in `notify_event_time_forced_total`. Keep it above `pipeline.identityWait`, which a held message's progress mark can take, above the time the group takes to replace a lost instance (the 10 s session timeout, a rebalance and a restore: a lost writer waited out before its replacement speaks lets records go before the ones the replacement writes again), and above the backlogs the pipeline must read in order"
        ),
        .init(
            "pipeline.schemas", .filePath, default: .text("Schemas"), flag: "--schemas",
            environmentAliases: ["NOTIFY_SCHEMAS"],
            "Directory holding `topics.json`, `policies.json` and `categories.json`."),
        // Thumbnails
        .init(
            "thumbnails.url", .url, flag: "--thumbnail-service",
            "Thumbnail service that stage 1 asks, for each image attachment, `GET <url>?url=…&mimeType=…&bytes=…`; a 200 answer `{\"url\", \"mimeType\", \"bytes\"}` replaces the attachment (rule 10). Unset: no lookups."
        ),
        .init(
            "thumbnails.timeout", .seconds(0.01...30), default: .seconds(0.5),
            "Time allowed for one thumbnail request before the notification goes out without it, in order (rule 10)."),
        .init(
            "thumbnails.backlogLimit", .integer(0...10_000_000), default: .integer(1000),
            "Records waiting on a partition above which thumbnail lookups are skipped (rule 10)."),
        // HTTP endpoints
        .init(
            "http.listen", .address, default: .text("127.0.0.1:8080"), flag: "--http-listen",
            "Address of `/healthz`, `/readyz`, `/metrics` and the live console. Port 0 picks a free port."),
        .init(
            "http.console", .boolean, default: .boolean(true),
            "Serve the live console page at `/` and its event feed at `/console/events`."),
        // Probes
        .init(
            "probes.checkInterval", .seconds(0.1...60), default: .seconds(2),
            "How often a process asks the Kafka cluster for a topic's metadata, for its probes; each check gives up after this long too."
        ),
        .init(
            "probes.clusterTimeout", .seconds(1...3600), default: .seconds(15),
            "`/readyz` answers 503 once no check of the Kafka cluster has succeeded for this long, or a consumer of the process has held no partitions for this long since losing them in a rebalance; 200 again as soon as both are back."
        ),
        .init(
            "probes.stuckAfter", .seconds(5...3600), default: .seconds(60),
            "`/healthz` answers 503, so the orchestrator restarts the process, when no check of the Kafka cluster (reachable or not) has finished for this long: the process is stuck. A lost cluster alone never fails it."
        ),
        // Lifecycle and logs
        .init(
            "shutdown.gracePeriod", .seconds(1...120), default: .seconds(10),
            """
            On SIGTERM or SIGINT: time to stop fetching, finish in-flight work and commit before the process exits anyway \
            (then with status 1, saying so; a second signal exits at once).
            """
        ),
        .init(
            "log.level", .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
            default: .text("info"), "Lowest level logged."),
        .init(
            "log.format", .choice(LogFormat.allCases.map(\.rawValue)), default: .text(LogFormat.text.rawValue),
            flag: "--log-format",
            "How log lines are written to standard error: `text`, readable lines; `json`, one JSON object per line with `timestamp`, `level`, `logger`, `message`, `metadata`, `source`, and `trace_id` / `span_id` while a span is active (docs/operations.md, \"Logs\"). `broker`, `inspect`, `produce` and `topics`, which take no other setting, read only the flag and the variable."
        ),
        // Sinks, all kinds
        .init(
            "sink.concurrency", .integer(1...100_000), default: .integer(512), flag: "--max-in-flight",
            "Deliveries in flight at once per sink process (order per device is kept regardless)."),
        .init(
            "sink.maxAttempts", .integer(1...100), default: .integer(8), flag: "--max-attempts",
            "Delivery attempts of a command before it goes to `notify.dlq`."),
        .init(
            "sink.retryBaseDelay", .seconds(0.001...60), default: .seconds(0.2),
            "First retry delay; doubles per attempt, with jitter, and `Retry-After` wins when longer."),
        .init(
            "sink.retryMaxDelay", .seconds(0.01...3600), default: .seconds(30),
            "Longest delay between two attempts."),
        .init(
            "sink.requestTimeout", .seconds(0.01...300), default: .seconds(10),
            "Time allowed for one request to a push service or webhook."),
        .init(
            "sink.ledgerRestoreMargin", .seconds(0...2_419_200), default: .seconds(3600),
            "At start, a sink's ledger reads `notify.outcomes` from this long before the oldest command its group reads again (the record at its committed offsets on `notify.commands`, by timestamp), not the whole topic. Covers clocks that disagree and events stamped ahead of their processing; a new group (no committed offsets) reads the whole topic."
        ),
        .init(
            "sink.caFile", .filePath, flag: "--ca-file",
            "PEM file of extra certificate authorities to trust (TLS verification stays on)."),
        // APNs
        .init(
            "sink.apns.endpoint", .url, default: .text("https://api.push.apple.com"), flag: "--endpoint",
            "APNs server; `https://api.sandbox.push.apple.com` for development builds."),
        .init(
            "sink.apns.keyFile", .filePath, flag: "--key-file",
            "The `.p8` signing key file for token authentication. Or the key itself in `NOTIFY_APNS_KEY`."),
        .init("sink.apns.keyId", .text, flag: "--key-id", "Key ID of the `.p8` key (JWT `kid`)."),
        .init("sink.apns.teamId", .text, flag: "--team-id", "Apple developer team ID (JWT `iss`)."),
        .init(
            "sink.apns.connections", .integer(1...64), default: .integer(2), flag: "--connections",
            "HTTP/2 connections to APNs; requests are multiplexed over them."),
        // FCM
        .init(
            "sink.fcm.endpoint", .url, default: .text("https://fcm.googleapis.com"), flag: "--endpoint",
            "FCM HTTP v1 server."),
        .init(
            "sink.fcm.serviceAccountFile", .filePath, flag: "--service-account",
            "Google service-account JSON file. Or the JSON itself in `NOTIFY_FCM_SERVICE_ACCOUNT`."),
        // In-app gateway
        .init(
            "sink.inapp.listen", .address, default: .text("127.0.0.1:8090"), flag: "--listen",
            "Address of the in-app WebSocket gateway (`/v1/stream`)."),
        .init(
            "sink.inapp.secretFile", .filePath, flag: "--secret-file",
            "File holding the HS256 secret that signs client tokens without a `kid` header (at least 32 bytes). Or the secret itself in `NOTIFY_INAPP_SECRET`."
        ),
        .init(
            "sink.inapp.secretsDirectory", .filePath, flag: "--secrets-dir",
            "Directory of HS256 secrets (at least 32 bytes each) for client tokens with a `kid` header: each file is one secret, named by its `kid` (names starting with `.` are skipped, as a Kubernetes Secret volume needs). Read again every 5 s, so a secret can be added and retired without dropping connected clients (docs/operations.md, \"Rotating in-app secrets\"). With `sink.inapp.secretFile` or alone."
        ),
        .init(
            "sink.inapp.clockLeeway", .seconds(0...300), default: .seconds(30),
            "How far a client token's `exp`, `nbf` and `iat` may be off this host's clock: a token is accepted until `exp` plus this, from `nbf` minus this, and if issued (`iat`) no later than now plus this."
        ),
        .init(
            "sink.inapp.ackTimeout", .seconds(0.1...600), default: .seconds(5), flag: "--ack-timeout-ms",
            "Time a connected device has to acknowledge a command before it becomes `undeliverable-local` (the flag takes milliseconds)."
        ),
        // Webhook
        .init("sink.webhook.url", .url, flag: "--url", "Where the webhook sink POSTs each command."),
        .init(
            "sink.webhook.secretFile", .filePath, flag: "--secret-file",
            "File holding the secret of the Standard Webhooks signature (`webhook-signature`): `whsec_` and base64, whose decoded bytes are the HMAC-SHA256 key, or any other text, whose bytes are the key. Or the secret itself in `NOTIFY_WEBHOOK_SECRET`."
        ),
        .init(
            "sink.webhook.secretsDirectory", .filePath, flag: "--secrets-dir",
            "Directory of further webhook secrets, one per file, written as in `sink.webhook.secretFile` (names starting with `.` are skipped). Every secret signs every request, so receivers can switch secrets while both are listed (docs/operations.md, \"Rotating webhook secrets\"). Read at start."
        ),
        .init(
            "sink.webhook.legacySignature", .boolean, default: .boolean(false),
            "Deprecated, for one release: also send the old headers `X-Notify-Timestamp`, `X-Notify-Signature: sha256=<hex HMAC of timestamp.body>` (with the first secret) and `X-Notify-Command-Id`."
        ),
        // JSONL
        .init("sink.jsonl.out", .filePath, flag: "--out", "File the jsonl sink appends delivered commands to."),
    ]

    /// The definition of `key`, if there is one.
    public static func definition(_ key: String) -> SettingDefinition? {
        byKey[key]
    }

    private static let byKey: [String: SettingDefinition] = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })
}
