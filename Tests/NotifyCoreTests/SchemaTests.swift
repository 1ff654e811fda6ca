import Foundation
import Testing

@testable import NotifyCore

/// Every example in `Schemas/examples/` against its topic's schema (a real
/// validator) and against the Swift decoder: both accept exactly the valid ones.
@Suite struct SchemaTests {
    struct Example {
        var url: URL
        var topic: String
        var valid: Bool
        var value: JSONValue
        var name: String { "\(valid ? "valid" : "invalid")/\(topic)/\(url.lastPathComponent)" }
    }

    static let schemaOfTopic = [
        "chat.messages": "chat.messages.schema.json", "chat.identities": "chat.identities.schema.json",
        "chat.conversations": "chat.conversations.schema.json", "chat.devices": "chat.devices.schema.json",
        "chat.preferences": "chat.preferences.schema.json", "chat.client-state": "chat.client-state.schema.json",
        "chat.reads": "chat.reads.schema.json", "notify.fanout": "notify.fanout.schema.json",
        "notify.outcomes": "outcome.schema.json", "notify.commands": "command.schema.json",
    ]

    func examples() throws -> [Example] {
        var examples: [Example] = []
        for valid in [true, false] {
            let directory = Repository.schemas.appendingPathComponent("examples/\(valid ? "valid" : "invalid")")
            for url in Repository.jsonFiles(under: directory) {
                let topic = url.deletingLastPathComponent().lastPathComponent
                examples.append(
                    Example(url: url, topic: topic, valid: valid, value: try CoreJSON.parse(Repository.bytes(url))))
            }
        }
        return examples
    }

    @Test func everyTopicHasValidAndInvalidExamples() throws {
        let examples = try examples()
        for topic in InputEvent.topics {
            #expect(examples.contains { $0.topic == topic && $0.valid }, "no valid example for \(topic)")
            #expect(examples.contains { $0.topic == topic && !$0.valid }, "no invalid example for \(topic)")
        }
    }

    @Test func schemasAndSwiftDecodingAgreeOnEveryExample() async throws {
        let examples = try examples()
        #expect(examples.count > 40)
        let results = try await SchemaValidator.validate(
            examples.map {
                SchemaValidator.Item(schema: Self.schemaOfTopic[$0.topic]!, instance: $0.value)
            })
        for (example, schemaError) in zip(examples, results) {
            #expect((schemaError == nil) == example.valid, "\(example.name): schema says \(schemaError ?? "valid")")
            let decoded = Result(catching: {
                try InputEvent.decode(topic: example.topic, value: Repository.bytes(example.url))
            })
            switch decoded {
            case .success(let event):
                #expect(example.valid, "\(example.name): Swift decoded an invalid example")
                // The decoded event writes back the same value (up to the time zone of `at`).
                let reparsed = try InputEvent.decode(topic: example.topic, json: event.jsonValue)
                #expect(reparsed == event, "\(example.name): does not round-trip")
            case .failure(let error):
                #expect(!example.valid, "\(example.name): Swift refused a valid example: \(error)")
            }
        }
    }

    @Test func configurationFilesMatchTheirSchemas() async throws {
        let files = [
            "topics.json": "topics.schema.json", "policies.json": "policies.schema.json",
            "categories.json": "categories.schema.json", "examples/scenarios/demo.json": "scenario.schema.json",
        ]
        let items = try files.sorted(by: { $0.key < $1.key }).map {
            SchemaValidator.Item(
                schema: $0.value,
                instance: try CoreJSON.parse(Repository.bytes(Repository.schemas.appendingPathComponent($0.key))))
        }
        for (item, error) in zip(items, try await SchemaValidator.validate(items)) {
            #expect(error == nil, "\(item.schema): \(error ?? "")")
        }
    }

    @Test func topicsListEveryTopicOfTheDesignWithItsSchema() throws {
        let topics = try CoreJSON.parse(Repository.bytes(Repository.schemas.appendingPathComponent("topics.json")))
        guard case .array(let entries)? = topics["topics"] else {
            Issue.record("topics.json has no topics array")
            return
        }
        let names = entries.compactMap { $0["name"]?.stringValue }
        let expected = [
            Topic.messages, Topic.identities, Topic.conversations, Topic.devices, Topic.preferences,
            Topic.clientState, Topic.reads, Topic.fanout, Topic.commands, Topic.outcomes, Topic.dlq,
            Topic.fanoutChangelog, Topic.routeChangelog, Topic.fanoutRepartition, Topic.routeRepartition,
        ]
        #expect(Set(names) == Set(expected))
        for entry in entries {
            let schema = try #require(entry["schema"]?.stringValue)
            #expect(
                FileManager.default.fileExists(atPath: Repository.schemas.appendingPathComponent(schema).path),
                "missing \(schema)")
            if entry["name"]?.stringValue?.hasSuffix("-changelog") == true {
                #expect(entry["cleanupPolicy"]?.stringValue == "compact")
            }
        }
    }

    @Test func outputsOfTheDemoMatchTheCommandFanoutAndChangelogSchemas() async throws {
        let configuration = try Repository.configuration()
        let events = try ScenarioRunner.events(
            of: Repository.bytes(Repository.schemas.appendingPathComponent("examples/scenarios/demo.json")))
        let fanout = FanoutStage(configuration: configuration)
        let route = RouteStage(configuration: configuration)
        var fanoutState = FanoutState()
        var routeState = RouteState()
        var items: [SchemaValidator.Item] = []
        for event in events {
            let input = try InputEvent.decode(topic: event.topic, json: event.value)
            var routeInputs: [RouteInput] = []
            if let fanoutInput = input.fanoutInput {
                let output = fanout.fold(&fanoutState, fanoutInput)
                items += output.records.map { .init(schema: "notify.fanout.schema.json", instance: $0.jsonValue) }
                for key in output.touchedKeys.sorted() {
                    if let snapshot = fanoutState.snapshot(key) {
                        items.append(
                            .init(schema: "fanout-changelog.schema.json", instance: try CoreJSON.parse(snapshot)))
                    }
                }
                routeInputs = output.records.map(RouteInput.fanout)
            } else if let routeInput = input.routeInput {
                routeInputs = [routeInput]
            }
            for routeInput in routeInputs + [.endOfInput] {
                let output = route.fold(&routeState, routeInput)
                items += output.commands.map { .init(schema: "command.schema.json", instance: $0.jsonValue) }
                for key in output.touchedKeys.sorted() {
                    items.append(
                        .init(
                            schema: "route-changelog.schema.json",
                            instance: try CoreJSON.parse(#require(routeState.snapshot(key)))))
                }
            }
        }
        #expect(items.contains { $0.schema == "command.schema.json" })
        #expect(items.contains { $0.schema == "fanout-changelog.schema.json" })
        for (item, error) in zip(items, try await SchemaValidator.validate(items)) {
            #expect(error == nil, "\(item.schema): \(error ?? "")")
        }
    }
}
