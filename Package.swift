// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "notify",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "notify", targets: ["notify"]),
        .library(name: "Kafka", targets: ["Kafka"]),
        .library(name: "NotifyCore", targets: ["NotifyCore"]),
        .library(name: "NotifyService", targets: ["NotifyService"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // The C binding of librdkafka. Only the `Kafka` module imports it.
        .systemLibrary(
            name: "CRdkafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        // Swift client for Kafka over librdkafka: producer, consumer, admin, embedded broker.
        .target(
            name: "Kafka",
            dependencies: [
                "CRdkafka",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The pure core: events, state, rules, builder, renderers. No I/O.
        .target(
            name: "NotifyCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The service shell every long-running command shares: settings, HTTP endpoints
        // (health, readiness, metrics, live console), metrics names, graceful lifecycle.
        .target(
            name: "NotifyService",
            dependencies: [
                "NotifyCore",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The Kafka shell around the core: the two stages as consumer-group members.
        .target(
            name: "NotifyPipeline",
            dependencies: [
                "Kafka",
                "NotifyCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The `notify` command line: one file per subcommand.
        .target(
            name: "NotifyCLI",
            dependencies: [
                "Kafka",
                "NotifyCore",
                "NotifyService",
                "NotifyPipeline",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "notify",
            dependencies: ["NotifyCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Benchmarks: one subcommand per figure the issues ask for.
        .executableTarget(
            name: "notify-bench",
            dependencies: [
                "Kafka",
                "NotifyCore",
                "NotifyPipeline",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The C baseline of `notify-bench passthrough`: the same work done with librdkafka directly.
        .executableTarget(
            name: "rdkafka-passthrough",
            path: "Benchmarks/rdkafka-passthrough",
            linkerSettings: [.linkedLibrary("rdkafka")]
        ),
        .testTarget(name: "KafkaTests", dependencies: ["Kafka"]),
        .testTarget(name: "NotifyCoreTests", dependencies: ["NotifyCore"], resources: [.copy("Golden")]),
        .testTarget(
            name: "NotifyServiceTests",
            dependencies: [
                "NotifyService",
                "NotifyCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(name: "NotifyPipelineTests", dependencies: ["NotifyPipeline", "Kafka", "NotifyCore"]),
        // Deploy/ checks: the compose and Kubernetes files parse, and every `notify` command they run exists.
        .testTarget(name: "DeployTests", dependencies: ["NotifyCLI", "NotifyService"]),
        .testTarget(name: "NotifyCLITests", dependencies: ["NotifyCLI"]),
    ]
)
