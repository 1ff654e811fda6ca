import ArgumentParser
import Foundation
import Kafka
import NotifyService

/// The options every command that talks to Kafka takes: `--bootstrap` (or
/// `NOTIFY_BOOTSTRAP`) and any librdkafka property as `-X key=value`.
struct KafkaOptions: ParsableArguments {
    @Option(name: .long, help: "Kafka bootstrap servers, HOST:PORT,... (env NOTIFY_BOOTSTRAP).")
    var bootstrap: String?

    @Option(name: .customShort("X"), help: ArgumentHelp("A librdkafka property, key=value (repeatable).", valueName: "key=value"))
    var properties: [String] = []

    /// The bootstrap list from the flag or the environment.
    func bootstrapServers() throws -> String {
        if let bootstrap, !bootstrap.isEmpty { return bootstrap }
        if let fromEnvironment = ProcessInfo.processInfo.environment["NOTIFY_BOOTSTRAP"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        throw ValidationError("No Kafka bootstrap servers: pass --bootstrap HOST:PORT or set NOTIFY_BOOTSTRAP.")
    }

    /// The client settings these options describe.
    func clientConfiguration(clientId: String = "notify") throws -> KafkaClientConfiguration {
        KafkaClientConfiguration(bootstrapServers: try bootstrapServers(), clientId: clientId, properties: try librdkafkaProperties())
    }

    /// The `-X` properties as a dictionary.
    func librdkafkaProperties() throws -> [String: String] {
        var result: [String: String] = [:]
        for property in properties {
            guard let (name, value) = KafkaClientConfiguration.property(property) else {
                throw ValidationError("-X \(property): expected key=value.")
            }
            if let problem = LibrdkafkaProperty.problem(name: name, value: value) { throw ValidationError("-X \(property): \(problem)") }
            result[name] = value
        }
        return result
    }
}

/// librdkafka's verdict on a property, with the nearest real name when the name is unknown.
enum LibrdkafkaProperty {
    /// Nil when librdkafka takes `name=value`.
    static func problem(name: String, value: String) -> String? {
        guard let problem = KafkaClientConfiguration.problem(withProperty: name, value: value) else { return nil }
        guard !KafkaClientConfiguration.librdkafkaPropertyNames.contains(name),
              let suggestion = closestMatch(to: name, among: KafkaClientConfiguration.librdkafkaPropertyNames) else { return problem }
        return "\(problem); did you mean \"\(suggestion)\"?"
    }
}
