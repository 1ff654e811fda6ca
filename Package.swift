// swift-tools-version:6.1
import PackageDescription

// The executables allocate through jemalloc (Debian's libjemalloc-dev) on Linux, not glibc's malloc:
// the pipeline allocates and frees many short-lived buffers over 1 KB (records, encoded commands)
// on several threads, which glibc serves from its shared bins and jemalloc from per-thread caches.
// In `notify-bench pipeline` that took 17% off the CPU per message (41 to 34 µs, medians of 3 runs each).
let jemalloc: [LinkerSetting] = [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]

let package = Package(
    name: "notify",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "notify", targets: ["notify"]),
        .library(name: "NotifyKafka", targets: ["NotifyKafka"]),
        .library(name: "NotifyCore", targets: ["NotifyCore"]),
        .library(name: "NotifyService", targets: ["NotifyService"]),
        .library(name: "NotifySinks", targets: ["NotifySinks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // 4.x: jwt-kit 5 needs swift-crypto 4.1 or later; every other package here takes 3.x to 5.x.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // OTLP/HTTP only: the OTLPGRPC trait would bring gRPC's packages into the build.
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // The in-app gateway's bearer tokens. Held below 5.8.0, which adds swift-extras-base64 and nothing we use.
        .package(url: "https://github.com/vapor/jwt-kit", "5.7.1"..<"5.8.0"),
    ],
    targets: [
        // The C binding of librdkafka. Only the `NotifyKafka` module imports it.
        .systemLibrary(
            name: "CRdkafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        // Swift client for Kafka over librdkafka: producer, consumer, admin, embedded broker.
        .target(
            name: "NotifyKafka",
            dependencies: [
                "CRdkafka",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The version and the git commit of this build (`notify --version`, `notify_build_info`).
        .target(name: "NotifyBuild", plugins: ["BuildCommit"]),
        // Generates the git commit constant of NotifyBuild at build time (Plugins/BuildCommit).
        .plugin(name: "BuildCommit", capability: .buildTool()),
        // The pure core: events, state, rules, builder, renderers. No I/O.
        .target(
            name: "NotifyCore",
            dependencies: ["CSHA256"]
        ),
        // SHA-256 of short inputs for the core's deterministic ids, with the CPU's SHA extensions where there are any.
        .target(name: "CSHA256"),
        // The service shell every long-running command shares: settings, HTTP endpoints
        // (health, readiness, metrics, live console), metrics names, graceful lifecycle.
        .target(
            name: "NotifyService",
            dependencies: [
                "NotifyKafka",
                "NotifyBuild",
                "NotifyCore",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // What the pipeline and the sinks both write on records: the trace context and its spans,
        // and dead letters with their headers.
        .target(
            name: "NotifyRecords",
            dependencies: [
                "NotifyKafka",
                "NotifyCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The Kafka shell around the core: the two stages as consumer-group members.
        .target(
            name: "NotifyPipeline",
            dependencies: [
                "NotifyKafka",
                "NotifyCore",
                "NotifyRecords",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Delivery sinks: the shared runtime (order, dedupe, expiry, retries, DLQ, outcomes)
        // and the kinds apns, fcm, inapp, webhook, jsonl.
        .target(
            name: "NotifySinks",
            dependencies: [
                "NotifyKafka",
                "NotifyCore",
                "NotifyRecords",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // Loopback stand-ins for the services the sinks talk to (APNs over HTTP/2, FCM and its
        // token endpoint, a webhook receiver) and a throwaway CA: used by the tests and notify-bench.
        .target(
            name: "NotifySinkStandIns",
            dependencies: [
                "NotifySinks",
                "NotifyCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Child processes run to their end by tests, off Swift's cooperative thread pool, and started
        // where no embedded broker is being taken down (EmbeddedBroker.startingChildProcess).
        .target(name: "NotifyTestSupport", dependencies: ["NotifyKafka"]),
        // The `notify` command line: one file per subcommand.
        .target(
            name: "NotifyCLI",
            dependencies: [
                "NotifyKafka",
                "NotifyBuild",
                "NotifyCore",
                "NotifyService",
                "NotifyPipeline",
                "NotifySinks",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "notify",
            dependencies: ["NotifyCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            linkerSettings: jemalloc
        ),
        // Benchmarks: one subcommand per figure the issues ask for.
        .executableTarget(
            name: "notify-bench",
            dependencies: [
                "NotifyKafka",
                "NotifyCore",
                "NotifyPipeline",
                "NotifySinks",
                "NotifySinkStandIns",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: jemalloc
        ),
        // The C baselines: `notify-bench passthrough`'s work done with librdkafka directly, and
        // (`--pipeline-floor`) the pipeline benchmark's record operations with nothing else.
        .executableTarget(
            name: "rdkafka-passthrough",
            path: "Benchmarks/rdkafka-passthrough",
            linkerSettings: [.linkedLibrary("rdkafka")]
        ),
        .testTarget(name: "NotifyKafkaTests", dependencies: ["NotifyKafka", "NotifyTestSupport"]),
        .testTarget(
            name: "NotifyCoreTests",
            dependencies: ["NotifyCore", "CSHA256", "NotifyTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            resources: [.copy("Golden")]
        ),
        .testTarget(
            name: "NotifyServiceTests",
            dependencies: [
                "NotifyService",
                "NotifyBuild",
                "NotifyCore",
                "NotifyTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        .testTarget(
            name: "NotifyPipelineTests",
            dependencies: [
                "NotifyPipeline", "NotifyKafka", "NotifyCore", "NotifyRecords", "NotifySinks", "NotifySinkStandIns",
                "NotifyTestSupport", .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        .testTarget(
            name: "NotifySinksTests",
            dependencies: [
                "NotifyKafka",
                "NotifyCore",
                "NotifyPipeline",
                "NotifyRecords",
                "NotifySinks",
                "NotifySinkStandIns",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // Deploy/ checks: the compose and Kubernetes files parse, and every `notify` command they run exists.
        .testTarget(name: "DeployTests", dependencies: ["NotifyCLI", "NotifyService", "NotifyTestSupport"]),
        .testTarget(
            name: "NotifyCLITests",
            dependencies: [
                "NotifyCLI",
                "NotifyKafka",
                "NotifyBuild",
                "NotifyCore",
                "NotifyService",
                "NotifySinks",
                "NotifyTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
