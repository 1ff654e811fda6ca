import Configuration
import Foundation
import SystemPackage

/// Where settings come from. Precedence, highest first: flags, environment, config file, defaults.
public struct SettingsSources: Sendable {
    /// The JSON config file (`--config`, env `NOTIFY_CONFIG`), if any.
    public var configFile: String?
    /// The process environment (or a test's stand-in).
    public var environment: [String: String]
    /// Values from the command line, by setting key (`--set KEY=VALUE` and the dedicated flags), as typed.
    public var flags: [String: String]
    /// The names flags were given under, by setting key, for messages (e.g. `--bootstrap`).
    public var flagNames: [String: String]
    /// librdkafka properties from `-X name=value` flags; they win over every other layer, name by name.
    public var kafkaProperties: [String: String]

    public init(
        configFile: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        flags: [String: String] = [:], flagNames: [String: String] = [:], kafkaProperties: [String: String] = [:]
    ) {
        self.kafkaProperties = kafkaProperties
        self.configFile = configFile
        self.environment = environment
        self.flags = flags
        self.flagNames = flagNames
    }
}

/// Reads every setting of ``SettingsCatalogue`` through swift-configuration providers, layered as
/// ``SettingsSources`` says, and checks each value. All problems are reported together.
enum SettingsLoader {
    /// One provider and how to name a value found in it.
    private struct Layer {
        var provider: any ConfigProvider
        var describe: (SettingDefinition, LookupResult) -> String
    }

    static func resolve(_ sources: SettingsSources) async throws -> [String: SettingValue] {
        var problems: [SettingsProblem] = []
        var layers: [Layer] = []
        var fileValues: [String: SettingValue] = [:]

        var flagContents: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, text) in sources.flags {
            let flag = sources.flagNames[key] ?? "--set \(key)"
            guard let definition = SettingsCatalogue.definition(key) else {
                problems.append(
                    SettingsProblem(
                        source: "flag \(flag)", path: key,
                        kind: .unknownKey(
                            suggestion: closestMatch(to: key, among: SettingsCatalogue.all.map(\.key)))))
                continue
            }
            switch parseFlag(text, as: definition.kind) {
            case .success(let content): flagContents[definition.configKey] = ConfigValue(content, isSecret: false)
            case .failure(let kind): problems.append(SettingsProblem(source: "flag \(flag)", path: key, kind: kind))
            }
        }
        layers.append(
            Layer(provider: InMemoryProvider(name: "flags", values: flagContents)) { definition, _ in
                "flag \(sources.flagNames[definition.key] ?? "--set \(definition.key)")"
            })

        layers.append(
            Layer(provider: environmentProvider(sources.environment)) { _, lookup in
                "environment variable \(lookup.encodedKey)"
            })

        if let path = sources.configFile {
            let fileProblems = SettingsFileCheck.problems(inFileAt: path)
            problems += fileProblems
            if fileProblems.isEmpty, let data = FileManager.default.contents(atPath: path) {
                fileValues = SettingsFileCheck.values(in: data)
                let name = (path as NSString).lastPathComponent
                layers.append(
                    Layer(provider: try await FileProvider<JSONSnapshot>(filePath: FilePath(path))) { definition, _ in
                        name
                    })
            }
        }

        var resolved: [String: SettingValue] = [:]
        for definition in SettingsCatalogue.all {
            if definition.kind == .properties {
                // Name-by-name merge: file, then environment, then flags.
                var merged: [String: String] = [:]
                if case .properties(let map)? = fileValues[definition.key] { merged.merge(map) { $1 } }
                for layer in layers.dropLast(sources.configFile == nil ? 0 : 1).reversed() {
                    guard let found = lookUp(definition, in: layer, problems: &problems) else { continue }
                    if case .properties(let map) = found { merged.merge(map) { $1 } }
                }
                merged.merge(sources.kafkaProperties) { $1 }
                resolved[definition.key] = .properties(merged)
                continue
            }
            var value = definition.defaultValue
            for layer in layers {
                if let found = lookUp(definition, in: layer, problems: &problems) {
                    value = found
                    break
                }
            }
            resolved[definition.key] = value
        }
        guard problems.isEmpty else { throw SettingsError(problems: problems) }
        return resolved
    }

    /// The checked value of `definition` in `layer`, or nil when the layer does not set it (or sets it
    /// wrongly, which is recorded).
    private static func lookUp(_ definition: SettingDefinition, in layer: Layer, problems: inout [SettingsProblem])
        -> SettingValue?
    {
        let lookup: LookupResult
        do {
            lookup = try layer.provider.value(forKey: definition.configKey, type: definition.kind.configType)
        } catch {
            let raw =
                (try? layer.provider.value(forKey: definition.configKey, type: .string))
                ?? LookupResult(encodedKey: definition.key, value: nil)
            let found = if case .string(let text)? = raw.value?.content { "\"\(text)\"" } else { "another type" }
            problems.append(
                SettingsProblem(
                    source: layer.describe(definition, raw), path: definition.key,
                    kind: .wrongType(expected: definition.kind.explanation, found: found)))
            return nil
        }
        guard let content = lookup.value?.content else { return nil }
        switch definition.check(content) {
        case .success(let value): return value
        case .failure(let kind):
            problems.append(
                SettingsProblem(source: layer.describe(definition, lookup), path: definition.key, kind: kind))
            return nil
        }
    }

    /// The environment as a provider of `notify.*` keys (`NOTIFY_KAFKA_BOOTSTRAP`), with each setting's
    /// aliases (`NOTIFY_BOOTSTRAP`) read when its canonical variable is absent.
    static func environmentProvider(_ environment: [String: String]) -> KeyMappingProvider<EnvironmentVariablesProvider>
    {
        var environment = environment
        for definition in SettingsCatalogue.all {
            let canonical = environmentVariableName(definition)
            guard environment[canonical] == nil else { continue }
            if let alias = definition.environmentAliases.first(where: { environment[$0] != nil }) {
                environment[canonical] = environment[alias]
            }
        }
        return EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "notify")
    }

    /// The canonical environment variable of a setting, as swift-configuration encodes its key.
    static func environmentVariableName(_ definition: SettingDefinition) -> String {
        let provider = EnvironmentVariablesProvider(environmentVariables: [:]).prefixKeys(with: "notify")
        return (try? provider.value(forKey: definition.configKey, type: .string).encodedKey) ?? definition.key
    }

    /// A flag's text as the content its setting's kind expects.
    private static func parseFlag(_ text: String, as kind: SettingKind) -> Result<ConfigContent, SettingsProblem.Kind> {
        switch kind.configType {
        case .int:
            guard let number = Int(text) else {
                return .failure(.wrongType(expected: kind.explanation, found: "\"\(text)\""))
            }
            return .success(.int(number))
        case .double:
            guard let number = Double(text) else {
                return .failure(.wrongType(expected: kind.explanation, found: "\"\(text)\""))
            }
            return .success(.double(number))
        case .bool:
            guard let flag = Bool(text) else {
                return .failure(.wrongType(expected: kind.explanation, found: "\"\(text)\""))
            }
            return .success(.bool(flag))
        case .stringArray:
            return .success(.stringArray(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }))
        default:
            return .success(.string(text))
        }
    }
}
