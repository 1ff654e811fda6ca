import Foundation
import NotifyCore
import Testing

@Suite struct FanoutRecordTests {
    /// The fanout record writer takes shortcuts (constant keys, the content's identity parts
    /// written once); they must not change a byte of any record the golden scenarios make
    /// (attachments, badges, group subtitles, unresolved identities).
    @Test func writerGivesTheBytesOfTheRecordsJSONValue() throws {
        let configuration = try Repository.configuration()
        let stage = FanoutStage(configuration: configuration)
        var records: [FanoutRecord] = []
        let scenarios = Repository.jsonFiles(under: Repository.goldenSource.appendingPathComponent("scenarios"))
        #expect(!scenarios.isEmpty)
        for scenario in scenarios {
            var state = FanoutState()
            for event in try ScenarioRunner.events(of: Repository.bytes(scenario)) {
                guard let input = try InputEvent.decode(topic: event.topic, json: event.value).fanoutInput else {
                    continue
                }
                records += stage.fold(&state, input).records
            }
            records += stage.fold(&state, .endOfInput).records
        }
        #expect(records.contains { $0.content.attachment != nil })
        #expect(records.contains { !$0.content.identityResolved })
        for record in records {
            #expect(CoreJSON.encode(record) == CoreJSON.encode(record.jsonValue), "\(record.id)")
        }
    }
}
