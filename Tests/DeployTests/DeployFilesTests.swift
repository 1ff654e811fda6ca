import Foundation
import NotifyService
import NotifyTestSupport
import Testing

@testable import NotifyCLI

/// What `Deploy/check.py` reads out of the compose file, the Dockerfile and the Kubernetes manifests.
private struct DeployReport: Decodable {
    struct Invocation: Decodable {
        var `where`: String
        var argv: [String]
    }
    struct Variable: Decodable {
        var `where`: String
        var name: String
    }
    struct ConfigFile: Decodable {
        var `where`: String
        var text: String
    }
    struct Deployment: Decodable {
        var name: String
        var autoscaled: Bool
    }
    struct Expression: Decodable {
        var `where`: String
        var expr: String
    }

    var invocations: [Invocation]
    var environment: [Variable]
    var configFiles: [ConfigFile]
    var deployments: [Deployment]
    var problems: [String]
    /// The PromQL of every rule of `Deploy/prometheus/rules.yaml` and every panel of `Deploy/grafana/notify.json`.
    var expressions: [Expression]
    /// The names of the alerting rules.
    var alerts: [String]

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
        #expect(
            Set(report.deployments.map(\.name)) == [
                "notify-pipeline", "notify-sink-apns", "notify-sink-fcm", "notify-sink-webhook", "notify-sink-inapp",
            ])
        #expect(
            report.deployments.filter(\.autoscaled).map(\.name).sorted() == [
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
        let known = Set(
            settings + [
                "NOTIFY_CONFIG", "NOTIFY_APNS_KEY", "NOTIFY_FCM_SERVICE_ACCOUNT", "NOTIFY_INAPP_SECRET",
                "NOTIFY_WEBHOOK_SECRET",
            ])
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

    @Test("the Prometheus rules and the Grafana dashboard use only metrics the code exports")
    func monitoringUsesExportedMetrics() async throws {
        let report = try await DeployReport.load()
        #expect(report.problems == [])
        #expect(report.expressions.count >= 20)
        var exported = Set<String>()
        for family in MetricName.catalogue {
            exported.insert(family.name)
            if family.type == .histogram { exported.formUnion(["_bucket", "_sum", "_count"].map { family.name + $0 }) }
        }
        for expression in report.expressions {
            let names = Self.metricNames(in: expression.expr)
            #expect(!names.isEmpty, "\(expression.where): no metric in \(expression.expr)")
            for name in names.subtracting(exported).sorted() {
                Issue.record("\(expression.where): \(name) is not a metric notify exports")
            }
        }
    }

    @Test("every alert of the rules is named in the runbook")
    func alertsAreDocumented() async throws {
        let report = try await DeployReport.load()
        let runbook = try String(
            contentsOf: DeployReport.repository.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        #expect(report.alerts.count >= 8)
        for alert in report.alerts {
            #expect(runbook.contains("`\(alert)`"), "docs/operations.md does not name the alert \(alert)")
        }
    }

    @Test("the PromQL reader finds metric names, not functions, labels, strings or ranges")
    func promQLNames() {
        let expression = """
            histogram_quantile(0.99, sum by (le, stage) (rate(a_bucket{outcome="b_c", kind=~"x"}[5m] offset 1d))) > 2 \
            and on (stage) process_open_fds / process_max_fds unless time() - d_total
            """
        #expect(Self.metricNames(in: expression) == ["a_bucket", "process_open_fds", "process_max_fds", "d_total"])
    }

    /// The metric names a PromQL expression reads: identifiers that are not functions, keywords,
    /// label names or values, ranges or offsets.
    static func metricNames(in expression: String) -> Set<String> {
        var text = expression.replacing(/"(?:[^"\\]|\\.)*"/, with: "")
        text = text.replacing(/\{[^}]*\}/, with: "")
        text = text.replacing(/\[[^\]]*\]/, with: "")
        text = text.replacing(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/, with: "")
        text = text.replacing(/\boffset\s+[0-9a-z]+/, with: "")
        var names = Set<String>()
        for match in text.matches(of: /([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/) where match.2 == nil {
            let word = String(match.1)
            if !["and", "or", "unless", "bool"].contains(word) { names.insert(word) }
        }
        return names
    }
}
