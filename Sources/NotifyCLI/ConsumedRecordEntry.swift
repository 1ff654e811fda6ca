import NotifyKafka
import NotifyPipeline
import NotifyRecords
import NotifyService

extension ConsoleEntry {
    /// The console entry of a record a stage (or `notify dev`'s identity tap) read.
    static func consumed(_ record: KafkaRecord) -> ConsoleEntry {
        let traceparent = record.headers.first { $0.name == TraceContext.header }?.value.map {
            String(decoding: $0, as: UTF8.self)
        }
        return .record(
            topic: record.topic, key: record.key.map { String(decoding: $0, as: UTF8.self) },
            value: record.value, traceparent: traceparent)
    }
}
