import Foundation
import Testing

/// What a process test prints when its run differs from render: the partition moves of every
/// process, with the test's own steps, in time order.
@Suite struct ProcessLogsTests {
    @Test func partitionMovesComeFromEveryLogInTimeOrderWithTheTestsNotes() throws {
        let logs = try ProcessLogs()
        defer { logs.remove() }
        let first = """
            2026-12-07T08:00:01+0000 info notify : [NotifyKafka] Partitions assigned: chat.messages[0], chat.messages[1]
            2026-12-07T08:00:02+0000 info notify : [NotifyPipeline] Restored fanout task 0
            2026-12-07T08:00:03+0000 info notify : [NotifyPipeline] Read the fanout tables for 2 tasks
            2026-12-07T08:00:09+0000 info notify : [NotifyKafka] Partitions revoked: chat.messages[1]

            """
        let second = """
            2026-12-07T08:00:05+0000 info notify : [NotifyKafka] Partitions assigned: chat.messages[1]
            2026-12-07T08:00:05+0000 info notify : [NotifyKafka] Assigned partitions resume: chat.messages[1] at 25 of 30
            2026-12-07T08:00:05+0000 info notify : [NotifyPipeline] Restored fanout task 1

            """
        #expect(FileManager.default.createFile(atPath: logs.path(for: "first"), contents: Data(first.utf8)))
        #expect(FileManager.default.createFile(atPath: logs.path(for: "second"), contents: Data(second.utf8)))
        logs.note("first killed with SIGKILL")
        let moves = logs.partitionMoves()
        #expect(moves.count == 7, "\(moves)")
        #expect(!moves.contains { $0.contains("Read the fanout tables") })
        #expect(moves.prefix(2).allSatisfy { $0.hasPrefix("first: 2026-12-07T08:00:0") })
        #expect(
            moves[2]
                == "second: 2026-12-07T08:00:05+0000 info notify : [NotifyKafka] Partitions assigned: chat.messages[1]")
        #expect(moves[3].hasPrefix("second: ") && moves[3].hasSuffix("resume: chat.messages[1] at 25 of 30"))
        #expect(moves[4].hasPrefix("second: ") && moves[4].hasSuffix("Restored fanout task 1"))
        #expect(moves[5].hasSuffix("Partitions revoked: chat.messages[1]"))
        // The note is stamped now, after every line above.
        #expect(moves[6].hasPrefix("test: ") && moves[6].hasSuffix(" test: first killed with SIGKILL"))
    }
}
