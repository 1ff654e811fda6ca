import ArgumentParser
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyService

/// The options every command that talks to Kafka takes: `--bootstrap` (or `NOTIFY_BOOTSTRAP`),
/// `--connect-timeout` (or `NOTIFY_CONNECT_TIMEOUT`) and any librdkafka property as `-X key=value`.
struct KafkaOptions: ParsableArguments {
    @Option(name: .long, help: "Kafka bootstrap servers, HOST:PORT,... (env NOTIFY_BOOTSTRAP).")
    var bootstrap: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds to wait for the bootstrap servers before failing (env NOTIFY_CONNECT_TIMEOUT; default 10).",
            valueName: "seconds"))
    var connectTimeout: Double?

    @Option(
        name: .customShort("X"),
        help: ArgumentHelp("A librdkafka property, key=value (repeatable).", valueName: "key=value"))
    var properties: [String] = []

    /// The bootstrap list and where it came from (`--bootstrap` or `NOTIFY_BOOTSTRAP`), for messages.
    private func bootstrapAndOrigin(environment: [String: String]) throws -> (servers: String, origin: String) {
        if let bootstrap, !bootstrap.isEmpty { return (bootstrap, "--bootstrap") }
        if let fromEnvironment = environment["NOTIFY_BOOTSTRAP"], !fromEnvironment.isEmpty {
            return (fromEnvironment, "NOTIFY_BOOTSTRAP")
        }
        throw ValidationError(
            "No Kafka bootstrap servers: pass --bootstrap HOST:PORT or set NOTIFY_BOOTSTRAP (`notify dev` prints its list)."
        )
    }

    /// The client settings these options describe, once a broker at the bootstrap list has answered;
    /// throws a message naming the list and where it came from when none answers within the connect timeout.
    func reachableClient(clientId: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        async throws -> KafkaClientConfiguration
    {
        try await reachableCluster(clientId: clientId, environment: environment).client
    }

    /// ``reachableClient(clientId:environment:)`` and the names of the cluster's topics.
    func reachableCluster(
        clientId: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> (client: KafkaClientConfiguration, topics: Set<String>) {
        let (servers, origin) = try bootstrapAndOrigin(environment: environment)
        let client = KafkaClientConfiguration(
            bootstrapServers: servers, clientId: clientId, properties: try librdkafkaProperties())
        let topics = try await KafkaReachability.check(
            client, timeout: try timeout(environment: environment), origin: origin)
        return (client, topics)
    }

    /// `--connect-timeout`, else `NOTIFY_CONNECT_TIMEOUT`, else 10 s.
    private func timeout(environment: [String: String]) throws -> Duration {
        let text = connectTimeout.map { String($0) } ?? environment["NOTIFY_CONNECT_TIMEOUT"]
        guard let text else { return .seconds(10) }
        guard let seconds = Double(text), seconds > 0, seconds <= 600 else {
            throw ValidationError(
                "connect timeout \(text): expected seconds between 0 and 600 (--connect-timeout or NOTIFY_CONNECT_TIMEOUT)."
            )
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// The `-X` properties as a dictionary.
    func librdkafkaProperties() throws -> [String: String] {
        var result: [String: String] = [:]
        for property in properties {
            guard let (name, value) = KafkaClientConfiguration.property(property) else {
                throw ValidationError("-X \(property): expected key=value.")
            }
            if let problem = LibrdkafkaProperty.problem(name: name, value: value) {
                throw ValidationError("-X \(property): \(problem)")
            }
            result[name] = value
        }
        return result
    }
}

/// The first thing a Kafka command does: ask the bootstrap servers for the cluster's metadata, within a
/// bounded time, so a stale or wrong bootstrap list fails at once with a message that names it instead
/// of retrying "Connection refused" for ever.
enum KafkaReachability {
    /// The topics of the cluster at `client`'s bootstrap list.
    /// - Parameters:
    ///   - timeout: how long to wait (setting `kafka.connectTimeout`).
    ///   - origin: where the bootstrap list came from (`--bootstrap`, `NOTIFY_BOOTSTRAP`, "the default"...).
    @discardableResult
    static func check(_ client: KafkaClientConfiguration, timeout: Duration, origin: String) async throws -> Set<String>
    {
        var quiet = Logger(label: "notify.connect")
        quiet.logLevel = .critical
        let admin = try KafkaAdmin(configuration: client, logger: quiet)
        do {
            return try await admin.topicNames(timeoutMilliseconds: Int32(clamping: timeout.milliseconds))
        } catch let error as KafkaError {
            throw CommandFailure(
                unreachableMessage(client.bootstrapServers, origin: origin, timeout: timeout, error: error))
        }
    }

    /// The message of a bootstrap list that did not answer.
    static func unreachableMessage(_ servers: String, origin: String, timeout: Duration, error: KafkaError) -> String {
        """
        no Kafka broker answered at \(servers) (\(origin)) within \(timeout.secondsText) s: \
        \(error.name) \(error.message). Set the bootstrap list with --bootstrap HOST:PORT,... or NOTIFY_BOOTSTRAP \
        (`notify dev` prints its own); --connect-timeout SECONDS changes the wait.
        """
    }
}

/// librdkafka's verdict on a property, with the nearest real name when the name is unknown.
enum LibrdkafkaProperty {
    /// Nil when librdkafka takes `name=value`.
    static func problem(name: String, value: String) -> String? {
        guard let problem = KafkaClientConfiguration.problem(withProperty: name, value: value) else { return nil }
        guard !KafkaClientConfiguration.librdkafkaPropertyNames.contains(name),
            let suggestion = closestMatch(to: name, among: KafkaClientConfiguration.librdkafkaPropertyNames)
        else { return problem }
        return "\(problem); did you mean \"\(suggestion)\"?"
    }
}
