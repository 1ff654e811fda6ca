import Foundation
import NotifyService
import NotifyTestSupport
import Testing
@testable import NotifyCLI

/// What `Deploy/check.py` reads out of the compose file, the Dockerfile and the Kubernetes manifests.
private struct DeployReport: Decodable {
    struct Invocation: Decodable { var `where`: String; var argv: [String] }
    struct Variable: Decodable { var `where`: String; var name: String }
    struct ConfigFile: Decodable { var `where`: String; var text: String }
    struct Deployment: Decodable { var name: String; var autoscaled: Bool }

    var invocations: [Invocation]
    var environment: [Variable]
    var configFiles: [ConfigFile]
    var deployments: [Deployment]
    var problems: [String]

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs the reader with Python (PyYAML) and decodes its report.
    static func load() async throws -> DeployReport {
        let result = try await runChildProcess("python3", [repository.appendingPathComponent("Deploy/check.py").path])
        #expect(result.status == 0, "Deploy/check.py failed (is PyYAML installed?): \(result.errorText)")
        return try JSONDecoder().decode(DeployReport.self, from: result.output)
    }
}

@Suite("Deploy/: compose file, Dockerfile and Kubernetes manifests")
struct DeployFilesTests {
    @Test("the files parse and are complete: KRaft Kafka, two pipelines, probes, resources, existing references")
    func structure() async throws {
        let report = try await DeployReport.load()
        #expect(report.problems == [])
        #expect(Set(report.deployments.map(\.name)) == [
            "notify-pipeline", "notify-sink-apns", "notify-sink-fcm", "notify-sink-webhook", "notify-sink-inapp",
        ])
        #expect(report.deployments.filter(\.autoscaled).map(\.name).sorted() == [
            "notify-pipeline", "notify-sink-apns", "notify-sink-fcm", "notify-sink-webhook",
        ])
    }

    @Test("every notify command line they run parses with the real command tree")
    func invocationsParse() async throws {
        let report = try await DeployReport.load()
        #expect(report.invocations.count >= 10)
        let registered = Set(NotifyCommand.configuration.subcommands.compactMap { $0.configuration.commandName })
        for invocation in report.invocations {
            let line = "\(invocation.where): notify \(invocation.argv.joined(separator: " "))"
            guard let subcommand = invocation.argv.first, registered.contains(subcommand) else {
                Issue.record("\(line): no such subcommand (registered: \(registered.sorted().joined(separator: ", ")))")
                continue
            }
            #expect(throws: Never.self, "\(line)") { _ = try NotifyCommand.parseAsRoot(invocation.argv) }
        }
        let subcommands = Set(report.invocations.compactMap(\.argv.first))
        #expect(subcommands == ["topics", "pipeline", "sink"])
    }

    @Test("every NOTIFY_ variable they set is a documented setting or secret variable")
    func environmentIsKnown() async throws {
        let report = try await DeployReport.load()
        #expect(report.environment.contains { $0.name.hasPrefix("NOTIFY_") }, "no NOTIFY_ variable found to check")
        let settings = SettingsCatalogue.all.flatMap { [$0.environmentVariable] + $0.environmentAliases }
        let known = Set(settings + ["NOTIFY_CONFIG", "NOTIFY_APNS_KEY", "NOTIFY_FCM_SERVICE_ACCOUNT", "NOTIFY_INAPP_SECRET", "NOTIFY_WEBHOOK_SECRET"])
        for variable in report.environment where variable.name.hasPrefix("NOTIFY_") {
            #expect(known.contains(variable.name), "\(variable.where): \(variable.name) is no setting")
        }
    }

    @Test("the config files they ship pass notify config check")
    func configFilesCheck() async throws {
        let report = try await DeployReport.load()
        #expect(!report.configFiles.isEmpty)
        for file in report.configFiles {
            #expect(SettingsFileCheck.problems(in: Data(file.text.utf8), source: file.where) == [])
        }
    }
}
