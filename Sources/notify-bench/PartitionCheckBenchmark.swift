import ArgumentParser
import NotifyCore
import NotifyKafka

/// `notify-bench partition-check --count N`: the work the pipeline adds to every record of a users'
/// producer to tell whether it sits in its key's partition (is its topic an external input, then
/// murmur2 of its key modulo the partition count): all that a well-partitioned record pays for
/// producers that partition otherwise, since it takes no extra hop. One core, one thread.
struct PartitionCheckBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "partition-check",
        abstract: "Check N well-partitioned records against murmur2's partition of their key; prints ns per record."
    )

    @Option(help: "How many records to check.")
    var count = 20_000_000

    @Option(help: "Partitions of the input topics.")
    var partitions: Int32 = 12

    func run() {
        let externalTopics = [Topic.devices, Topic.preferences, Topic.clientState, Topic.reads]
        let keys = (0..<10_000).map { Array("user-\($0)".utf8) }
        let topics = keys.indices.map { externalTopics[$0 % externalTopics.count] }
        // Each record where murmur2 puts it, as a well-partitioned producer writes it.
        let partitionOf = keys.map { KafkaPartitioner.murmur2.partition(of: $0, partitionCount: partitions) }
        var misplaced = 0
        let started = ProcessCPUClock.seconds()
        for index in 0..<count {
            let slot = index % keys.count
            guard partitions > 1, externalTopics.contains(topics[slot]) else { continue }
            if KafkaPartitioner.murmur2.partition(of: keys[slot], partitionCount: partitions) != partitionOf[slot] {
                misplaced += 1
            }
        }
        let seconds = ProcessCPUClock.seconds() - started
        let nanoseconds = seconds * 1e9 / Double(count)
        print(
            "partition check: \(count) records in \(String(format: "%.3f", seconds)) s CPU = \(String(format: "%.1f", nanoseconds)) ns per record (\(misplaced) misplaced)"
        )
    }
}
