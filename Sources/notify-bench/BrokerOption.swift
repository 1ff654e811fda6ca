import ArgumentParser
import NotifyKafka

/// `--bootstrap`: the running broker a benchmark talks to (`notify broker` prints its address).
struct BrokerOption: ParsableArguments {
    @Option(help: "Kafka bootstrap servers, HOST:PORT,... (`notify broker` prints them).") var bootstrap: String

    /// Refuses an empty list at once: librdkafka would wait 10 s for a broker it cannot name, and fail
    /// with "_TRANSPORT ... metadata of chat.messages", which says nothing of the list.
    func validate() throws {
        guard bootstrap.contains(where: { !$0.isWhitespace }) else {
            throw ValidationError("--bootstrap is empty: pass the HOST:PORT list `notify broker` prints.")
        }
    }

    /// The client settings of the benchmark's clients at this broker.
    var client: KafkaClientConfiguration {
        KafkaClientConfiguration(bootstrapServers: bootstrap, clientId: "notify-bench")
    }
}
