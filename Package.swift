// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "notify",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "notify", targets: ["notify"]),
        .library(name: "Kafka", targets: ["Kafka"]),
        .library(name: "NotifyCore", targets: ["NotifyCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
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
                "NotifyPipeline",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
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
        .testTarget(name: "NotifyPipelineTests", dependencies: ["NotifyPipeline", "Kafka", "NotifyCore"]),
    ]
)
