import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite struct CoPartitioningTests {
    /// A stage whose co-partitioned topics differ in partition count refuses to run, naming the
    /// topics and their counts: one task could not own all of a key's records.
    @Test(arguments: [(StageName.fanout, Topic.conversations), (.route, Topic.devices)])
    func aStageRefusesToRunOnUnequalPartitionCounts(stage: StageName, topic: String) async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker(partitions: 4, unequal: [topic: 2]) { broker in
            let settings = PipelineSettings(
                client: client(broker), groupId: "co-partitioning", stages: [stage], core: configuration)
            let pipeline = PipelineInstance(settings: settings, logger: testLogger)
            let error = await #expect(throws: PipelineError.self) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await pipeline.run() }
                    // Still running after this: nothing refused it (it then stops when cancelled).
                    group.addTask { try await Task.sleep(for: .seconds(30)) }
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
            let message = error?.description ?? ""
            let refusal = "the \(stage.rawValue) stage needs its co-partitioned topics to have the same number"
            #expect(message.contains(refusal))
            #expect(message.contains("\(topic) 2"), "\(message)")
            #expect(!pipeline.isReady)
        }
    }
}
