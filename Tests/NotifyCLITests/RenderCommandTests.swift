import Foundation
import NotifyTestSupport
import Testing

/// `notify render` reads the same settings as `notify pipeline` (defaults, `--set`, `--config`,
/// `NOTIFY_*`), so the fold it runs is the pipeline's.
@Suite("notify render takes the pipeline's settings")
struct RenderCommandTests {
    private static func render(_ arguments: [String]) async throws -> (status: Int32, commands: [String]) {
        let products = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [
            products.appendingPathComponent("notify"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("notify"),
        ]
        let executable = try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "notify not built")
        let scenario = repositoryRoot.appendingPathComponent(
            "Tests/NotifyCoreTests/Golden/scenarios/badge-on-read.json"
        ).path
        let result = try await runChildProcess(
            executable.path,
            ["render", scenario, "--schemas", repositoryRoot.appendingPathComponent("Schemas").path] + arguments)
        return (result.status, result.outputText.split(separator: "\n").map(String.init))
    }

    /// Two reads 10 s apart: the pipeline's default interval (5 s) sends both badge pushes; with
    /// 60 s, from `--set` or from a config file, the second is coalesced and goes out later.
    @Test func theBackgroundPushIntervalIsThePipelinesSetting() async throws {
        let byDefault = try await Self.render([])
        let longer = try await Self.render(["--set", "pipeline.backgroundPushInterval=60"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "notify-render-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("notify.json")
        try Data(#"{"pipeline": {"backgroundPushInterval": 60}}"#.utf8).write(to: config)
        let fromFile = try await Self.render(["--config", config.path])
        #expect(byDefault.status == 0 && longer.status == 0 && fromFile.status == 0)
        let expected = try String(
            contentsOf: repositoryRoot.appendingPathComponent(
                "Tests/NotifyCoreTests/Golden/badge-on-read.commands.jsonl"), encoding: .utf8)
        #expect(
            byDefault.commands == expected.split(separator: "\n").map(String.init),
            "the default is the golden file's, the core's")
        #expect(longer.commands != byDefault.commands, "the interval changes what render makes")
        #expect(fromFile.commands == longer.commands)
    }

    @Test func aBadSettingIsRefusedWithItsName() async throws {
        let result = try await Self.render(["--set", "pipeline.identityWait=-1"])
        #expect(result.status != 0)
    }
}
