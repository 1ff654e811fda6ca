import Kafka

/// The order in which the pipeline folds records of several topics: each
/// partition in offset order, partitions merged by record time, ties going to
/// the topic earlier in `topicOrder` (tables before the streams they annotate).
func mergedByTime(_ records: [KafkaRecord], topicOrder: [String]) -> [KafkaRecord] {
    let rank = Dictionary(uniqueKeysWithValues: topicOrder.enumerated().map { ($1, $0) })
    var queues = Dictionary(grouping: records, by: \.topicPartition)
        .sorted { (rank[$0.key.topic] ?? .max, $0.key.partition) < (rank[$1.key.topic] ?? .max, $1.key.partition) }
        .map { $0.value[...] }
    var result: [KafkaRecord] = []
    result.reserveCapacity(records.count)
    while true {
        var best: Int?
        for index in queues.indices {
            guard let head = queues[index].first else { continue }
            if let current = best, (queues[current].first!.timestampMilliseconds ?? 0) <= (head.timestampMilliseconds ?? 0) {
                continue
            }
            best = index
        }
        guard let next = best else { return result }
        result.append(queues[next].removeFirst())
    }
}
