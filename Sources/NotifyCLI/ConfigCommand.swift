import ArgumentParser
import Foundation
import NotifyService

/// `notify config check FILE` and `notify config reference`.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check a config file, or print the configuration reference.",
        subcommands: [Check.self, Reference.self]
    )

    /// Validates a config file and explains each problem with its path; exits 1 when there are any.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Validate a JSON config file: JSON syntax (with line and column), unknown keys, wrong types, values out of range, librdkafka property names."
        )

        @Argument(help: "The config file.")
        var file: String

        func run() throws {
            let problems = SettingsFileCheck.problems(
                inFileAt: file, checkProperty: LibrdkafkaProperty.problem(name:value:))
            guard !problems.isEmpty else {
                print("\(file): OK")
                return
            }
            let report =
                problems.map { "\($0)\n" }.joined()
                + "\(file): \(problems.count) problem\(problems.count == 1 ? "" : "s")\n"
            FileHandle.standardError.write(Data(report.utf8))
            throw ExitCode(1)
        }
    }

    /// Prints docs/configuration.md.
    struct Reference: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the configuration reference (docs/configuration.md) as Markdown."
        )

        func run() {
            print(ConfigurationReference.markdown(), terminator: "")
        }
    }
}
