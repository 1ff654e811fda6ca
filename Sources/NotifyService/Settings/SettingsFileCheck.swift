import Configuration
import Foundation
import NotifyCore

/// Checks a JSON configuration file against ``SettingsCatalogue``: unknown keys (with the nearest real
/// key), values of the wrong type and values out of range, each with its dotted path.
///
/// This is what `notify config check FILE` runs, and what every command runs on its `--config` file
/// before it starts.
public enum SettingsFileCheck {
    /// What is wrong with a librdkafka property `name=value`, or nil when nothing is (the Kafka client
    /// asks librdkafka; this module does not link it).
    public typealias PropertyCheck = (_ name: String, _ value: String) -> String?

    /// All problems of the file at `path`; empty when the file is good. `checkProperty` checks each
    /// `kafka.properties` member.
    public static func problems(inFileAt path: String, checkProperty: PropertyCheck = { _, _ in nil })
        -> [SettingsProblem]
    {
        let source = (path as NSString).lastPathComponent
        guard let data = FileManager.default.contents(atPath: path) else {
            return [SettingsProblem(source: source, path: "", kind: .unreadable("cannot read \(path)"))]
        }
        return problems(in: data, source: source, checkProperty: checkProperty)
    }

    /// All problems of a configuration document; `source` names it in the messages.
    public static func problems(in data: Data, source: String, checkProperty: PropertyCheck = { _, _ in nil })
        -> [SettingsProblem]
    {
        if let failure = JSONSyntax.failure(in: String(decoding: data, as: UTF8.self)) {
            return [SettingsProblem(source: source, path: "", kind: .unreadable("not valid JSON: \(failure)"))]
        }
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            return [
                SettingsProblem(
                    source: source, path: "", kind: .unreadable("not valid JSON: \(jsonErrorSummary(error))"))
            ]
        }
        guard case .object(let members) = document else {
            return [
                SettingsProblem(
                    source: source, path: "",
                    kind: .wrongType(expected: "an object at the top", found: document.typeDescription))
            ]
        }
        var problems: [SettingsProblem] = []
        var properties: [String: String] = [:]
        walk(members, prefix: "", source: source, into: &problems) { key, value in
            if key == "kafka.properties", case .properties(let map) = value { properties = map }
        }
        for (name, text) in properties {
            if let problem = checkProperty(name, text) {
                problems.append(
                    SettingsProblem(source: source, path: "kafka.properties.\(name)", kind: .invalidValue(problem)))
            }
        }
        return problems.sorted { $0.path < $1.path }
    }

    /// The valid values of a configuration document, keyed by setting key (problems are skipped).
    static func values(in data: Data) -> [String: SettingValue] {
        guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: data) else { return [:] }
        var values: [String: SettingValue] = [:]
        var ignored: [SettingsProblem] = []
        walk(members, prefix: "", source: "", into: &ignored) { key, value in values[key] = value }
        return values
    }

    private static func walk(
        _ members: [String: JSONValue], prefix: String, source: String, into problems: inout [SettingsProblem],
        found: (String, SettingValue) -> Void = { _, _ in }
    ) {
        for (name, value) in members {
            let key = prefix.isEmpty ? name : "\(prefix).\(name)"
            if let definition = SettingsCatalogue.definition(key) {
                switch check(value, against: definition) {
                case .success(let checked): found(key, checked)
                case .failure(let kind): problems.append(SettingsProblem(source: source, path: key, kind: kind))
                }
            } else if case .object(let nested) = value, isSection(key) {
                walk(nested, prefix: key, source: source, into: &problems, found: found)
            } else {
                let candidates = SettingsCatalogue.all.map(\.key) + sections
                problems.append(
                    SettingsProblem(
                        source: source, path: key,
                        kind: .unknownKey(suggestion: closestMatch(to: key, among: candidates))))
            }
        }
    }

    /// Every dotted prefix of a setting key: `sink`, `sink.apns`, ...
    private static let sections: [String] = {
        var result = Set<String>()
        for key in SettingsCatalogue.all.map(\.key) {
            var parts = key.split(separator: ".").dropLast()
            while !parts.isEmpty {
                result.insert(parts.joined(separator: "."))
                parts = parts.dropLast()
            }
        }
        return result.sorted()
    }()

    private static func isSection(_ key: String) -> Bool { sections.contains(key) }

    /// The JSON value as the provider content the setting's kind expects, then checked.
    private static func check(_ value: JSONValue, against definition: SettingDefinition) -> Result<
        SettingValue, SettingsProblem.Kind
    > {
        let mismatch = SettingsProblem.Kind.wrongType(
            expected: definition.kind.explanation, found: value.typeDescription)
        switch (definition.kind, value) {
        case (.properties, .object(let members)):
            var map: [String: String] = [:]
            for (name, member) in members {
                switch member {
                case .string(let text): map[name] = text
                case .int(let number): map[name] = String(number)
                case .bool(let flag): map[name] = String(flag)
                default:
                    return .failure(
                        .wrongType(expected: "text for property \"\(name)\"", found: member.typeDescription))
                }
            }
            return .success(.properties(map))
        case (.list, .array(let elements)):
            let words = elements.compactMap(\.stringValue)
            guard words.count == elements.count else {
                return .failure(.wrongType(expected: "a list of text", found: value.typeDescription))
            }
            return definition.check(.stringArray(words))
        case (_, .string(let text)) where definition.kind.configType == .string:
            return definition.check(.string(text))
        case (.integer, .int(let number)):
            return definition.check(.int(Int(number)))
        case (.seconds, .int(let number)):
            return definition.check(.int(Int(number)))
        case (.seconds, .double(let number)):
            return definition.check(.double(number))
        case (.boolean, .bool(let flag)):
            return definition.check(.bool(flag))
        default:
            return .failure(mismatch)
        }
    }

    private static func jsonErrorSummary(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        }
        return String(describing: error)
    }
}

extension JSONValue {
    /// The JSON type and a short rendering of the value, for error messages.
    var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool(let flag): "boolean \(flag)"
        case .int(let number): "integer \(number)"
        case .double(let number): "number \(number)"
        case .string(let text): "text \"\(text)\""
        case .array: "a list"
        case .object: "an object"
        }
    }
}
