import Foundation
import Testing

@testable import NotifyCore

/// The commands and decisions of each scenario, byte for byte. The golden
/// files are the spec; regenerate them with `NOTIFY_UPDATE_GOLDEN=1 swift test`
/// and review the diff by eye.
@Suite struct GoldenTests {
    static let scenarios = [
        "one-to-one-text", "group-text-with-icon", "image-ios-android", "previews-never", "identity-resolved-late",
        "identity-never-resolved", "muted", "suppression-reasons", "badge-on-read", "ios-via-fcm", "long-japanese-body",
        "refused-attachment-local", "read-nothing-unread", "read-covers-held-message", "android-tap",
    ]

    static var updating: Bool { ProcessInfo.processInfo.environment["NOTIFY_UPDATE_GOLDEN"] == "1" }

    /// The golden output of a scenario: commands as JSONL, then one line per
    /// decision and per refused event.
    static func render(_ scenario: [UInt8]) throws -> (commands: String, decisions: String) {
        let result = try ScenarioRunner(configuration: Repository.configuration()).run(scenario: scenario)
        let commands = result.commands.map { String(decoding: CoreJSON.encode($0), as: UTF8.self) + "\n" }.joined()
        let decisions = (result.decisions.map(\.description) + result.rejections.map { "error: \($0)" })
            .map { $0 + "\n" }.joined()
        return (commands, decisions)
    }

    static func scenarioURL(_ name: String) -> URL {
        name == "demo"
            ? Repository.schemas.appendingPathComponent("examples/scenarios/demo.json")
            : Repository.goldenSource.appendingPathComponent("scenarios/\(name).json")
    }

    @Test(arguments: scenarios + ["demo"])
    func scenarioMatchesItsGoldenFiles(_ name: String) throws {
        let rendered = try Self.render(Repository.bytes(Self.scenarioURL(name)))
        let files = [("\(name).commands.jsonl", rendered.commands), ("\(name).decisions.txt", rendered.decisions)]
        for (file, text) in files {
            if Self.updating {
                try Data(text.utf8).write(to: Repository.goldenSource.appendingPathComponent(file))
                continue
            }
            let golden = try #require(
                Bundle.module.url(forResource: "Golden/\(file)", withExtension: nil), "missing golden \(file)")
            let expected = String(decoding: try Data(contentsOf: golden), as: UTF8.self)
            #expect(text == expected, "\(file) differs from its golden file (NOTIFY_UPDATE_GOLDEN=1 regenerates)")
        }
        #expect(
            !Self.updating, "golden files were regenerated: review them, then run again without NOTIFY_UPDATE_GOLDEN")
    }

    @Test func everyCommandOfEveryScenarioIsWithinThePlatformLimits() throws {
        for name in Self.scenarios + ["demo"] {
            let result = try ScenarioRunner(configuration: Repository.configuration()).run(
                scenario: Repository.bytes(Self.scenarioURL(name)))
            #expect(result.rejections.isEmpty, "\(name): \(result.rejections)")
            for command in result.commands {
                #expect(
                    PlatformRules.violations(of: command).isEmpty,
                    "\(name) \(command.id): \(PlatformRules.violations(of: command))")
            }
        }
    }

    @Test func everySuppressionReasonAppearsInTheSuppressionScenario() throws {
        let result = try ScenarioRunner(configuration: Repository.configuration())
            .run(scenario: Repository.bytes(Self.scenarioURL("suppression-reasons")))
        let reasons = Set(result.decisions.map(\.reason))
        // A copy of a fanout record comes only from stage 1 writing again after a crash: EventTimeOrderTests.
        #expect(reasons == Set(SuppressionReason.allCases).subtracting([.alreadyApplied]))
    }
}
