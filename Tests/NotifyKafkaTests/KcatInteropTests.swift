import Foundation
import NotifyKafka
import NotifyTestSupport
import Testing

/// Interop with kcat, a Kafka client nobody here wrote. Without kcat the tests fail, saying how to
/// install it (Scripts/setup.sh does), rather than pass unseen.
@Suite struct KcatInteropTests {
    @Test func weReadWhatKcatProduces() async throws {
        try await withEmbeddedBroker(topics: ["from-kcat": 2]) { broker in
            let lines = (0..<50).map { "k\($0 % 3):value-\($0)" }.joined(separator: "\n") + "\n"
            let status = try await runKcat(
                ["-b", broker.bootstrapServers, "-P", "-t", "from-kcat", "-K", ":", "-H", "source=kcat"], input: lines)
            #expect(status.code == 0, "\(status.output)")

            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "kcat-in"), logger: testLogger)
            try consumer.subscribe(["from-kcat"])
            let received = try await collect(consumer, count: 50)
            await consumer.close()
            #expect(Set(received.map(\.valueString)) == Set((0..<50).map { "value-\($0)" }))
            #expect(received.allSatisfy { $0.headers.string(for: "source") == "kcat" })
            for record in received {
                let index = Int(record.valueString.dropFirst("value-".count))!
                #expect(record.keyString == "k\(index % 3)")
            }
        }
    }

    @Test func kcatReadsWhatWeProduce() async throws {
        try await withEmbeddedBroker(topics: ["to-kcat": 1]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send(
                (0..<20).map {
                    record(
                        "to-kcat", key: "key-\($0)", value: "value-\($0)",
                        headers: [KafkaHeader(name: "n", string: "\($0)")])
                })
            await producer.close()
            let status = try await runKcat([
                "-b", broker.bootstrapServers, "-C", "-t", "to-kcat", "-o", "beginning", "-c", "20", "-e",
                "-f", "%k|%s|%h\\n",
            ])
            #expect(status.code == 0, "\(status.output)")
            let lines = status.output.split(separator: "\n").map(String.init)
            #expect(lines == (0..<20).map { "key-\($0)|value-\($0)|n=\($0)" })
        }
    }
}

let kcatPath: String? = ["/usr/bin/kcat", "/usr/local/bin/kcat", "/usr/bin/kafkacat"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

struct KcatMissing: Error, CustomStringConvertible {
    var description: String { "kcat not found: run Scripts/setup.sh (apt-get install -y kcat)" }
}

/// Runs kcat with a time limit; returns its exit code and standard output (standard error on failure).
func runKcat(_ arguments: [String], input: String? = nil) async throws -> (code: Int32, output: String) {
    guard let kcatPath else { throw KcatMissing() }
    let result = try await runChildProcess(
        kcatPath, arguments, input: input.map { Data($0.utf8) }, timeout: .seconds(30))
    return (result.status, result.status == 0 ? result.outputText : result.errorText + result.outputText)
}
