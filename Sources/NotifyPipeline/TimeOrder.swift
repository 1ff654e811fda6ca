import Kafka

/// The order in which the pipeline folds records of several topics: each
/// partition in offset order, partitions merged by record time, ties going to
/// the topic earlier in `topicOrder` (tables before the streams they annotate).
///
/// Works on positions in `records`, so a record is copied once, into the result.
func mergedByTime(_ records: [KafkaRecord], topicOrder: [String]) -> [KafkaRecord] {
    var positions: [TopicPartition: [Int]] = [:]
    for index in records.indices { positions[records[index].topicPartition, default: []].append(index) }
    guard positions.count > 1 else { return records }
    let rank = Dictionary(uniqueKeysWithValues: topicOrder.enumerated().map { ($1, $0) })
    let queues = positions
        .sorted { (rank[$0.key.topic] ?? .max, $0.key.partition) < (rank[$1.key.topic] ?? .max, $1.key.partition) }
        .map(\.value)
    var heads = [Int](repeating: 0, count: queues.count)
    func time(_ queue: Int) -> Int64 { records[queues[queue][heads[queue]]].timestampMilliseconds ?? 0 }
    var result: [KafkaRecord] = []
    result.reserveCapacity(records.count)
    while true {
        var best: Int?
        for queue in queues.indices where heads[queue] < queues[queue].count {
            if let current = best, time(current) <= time(queue) { continue }
            best = queue
        }
        guard let next = best else { return result }
        result.append(records[queues[next][heads[next]]])
        heads[next] += 1
    }
}
