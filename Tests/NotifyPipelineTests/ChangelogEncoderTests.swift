import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite struct ChangelogEncoderTests {
    /// The encoder gives the records the save's snapshots make, in their order.
    @Test func encodesTheSnapshotsRecordsInOrder() async {
        var output = TaskOutput()
        for partition in Int32(0)..<3 {
            output.changelog.append(
                ChangelogSnapshot {
                    (0..<2).map { index in
                        OutgoingRecord(
                            topic: Topic.fanoutChangelog, key: Array("k\(partition)-\(index)".utf8),
                            value: Array("v\(index)".utf8), partition: partition)
                    }
                })
        }
        let records = await ChangelogEncoder.shared.records(of: output)
        #expect(
            records.map { String(decoding: $0.key ?? [], as: UTF8.self) } == [
                "k0-0", "k0-1", "k1-0", "k1-1", "k2-0", "k2-1",
            ])
        #expect(records.map(\.value) == output.changelogRecords().map(\.value))
        #expect(records.map(\.partition) == [0, 0, 1, 1, 2, 2])
    }

    /// Its jobs run at nice 19, so the folds get the cores first, and only its thread does.
    @Test func runsOnAThreadOfItsOwnAtTheLowestPriority() async {
        let nice = await ChangelogEncoder.shared.run { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
        #expect(nice == 19)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == 0)
    }
}
