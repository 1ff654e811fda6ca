import ArgumentParser
import Foundation
import NotifyCore

/// `--schemas`: the Schemas directory (setting `pipeline.schemas`, env `NOTIFY_SCHEMAS`, default ./Schemas).
struct SchemasOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The Schemas directory (policies.json, categories.json); setting pipeline.schemas, env NOTIFY_SCHEMAS, default ./Schemas.",
            valueName: "dir"))
    var schemas: String?

    /// The directory: the flag, else `NOTIFY_SCHEMAS`, else `./Schemas`.
    var directory: String {
        if let schemas { return schemas }
        if let fromEnvironment = ProcessInfo.processInfo.environment["NOTIFY_SCHEMAS"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return "Schemas"
    }
}

extension SettingsOptions {
    /// The core's configuration as `notify pipeline` builds it from the same settings.
    func coreConfiguration(schemas: SchemasOption) async throws -> CoreConfiguration {
        try await load(dedicated: [("pipeline.schemas", "--schemas", schemas.schemas)]).coreConfiguration()
    }
}

/// `notify render SCENARIO.json`: the commands a scenario produces, without a
/// broker. Commands go to stdout as JSONL; one line per suppressed delivery
/// and one per refused event go to stderr.
struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract:
            "Print the commands a scenario produces (JSONL on stdout); suppressed deliveries and refused events on stderr.",
        discussion: """
            SCENARIO is {"events": [{"topic": "chat.messages", "value": {...}}, ...]}. Each stage folds its events \
            in event-time order (each value's "at"; events of one key keep their order in the file), as the \
            pipeline does, with the same settings (--config, --set, NOTIFY_*). Exits with status 1 when an event \
            was refused.
            """
    )

    @Argument(help: ArgumentHelp("The scenario file ('-' for stdin).", valueName: "SCENARIO.json"))
    var scenario: String

    @OptionGroup var schemas: SchemasOption
    @OptionGroup var settings: SettingsOptions

    func run() async throws {
        let configuration = try await settings.coreConfiguration(schemas: schemas)
        let bytes = try readScenario()
        let result: ScenarioRunner.Result
        do {
            result = try ScenarioRunner(configuration: configuration).run(scenario: bytes)
        } catch {
            throw RenderError(
                "\(scenario): \(error.field): \(error.problem); a scenario is {\"events\": [{\"topic\": \"chat.messages\", \"value\": {...}}, ...]}"
            )
        }
        var out: [UInt8] = []
        for command in result.commands {
            out += CoreJSON.encode(command)
            out.append(0x0A)
        }
        FileHandle.standardOutput.write(Data(out))
        var diagnostics = ""
        for decision in result.decisions {
            diagnostics += decision.description + "\n"
        }
        for rejection in result.rejections {
            diagnostics += "error: \(rejection)\n"
        }
        FileHandle.standardError.write(Data(diagnostics.utf8))
        if !result.rejections.isEmpty {
            throw ExitCode(1)
        }
    }

    private func readScenario() throws -> [UInt8] {
        if scenario == "-" {
            return [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        }
        guard let data = FileManager.default.contents(atPath: scenario) else {
            throw RenderError("cannot read the scenario file \(scenario)")
        }
        return [UInt8](data)
    }
}

/// A problem that stops `notify render`, said plainly (no usage text).
struct RenderError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
