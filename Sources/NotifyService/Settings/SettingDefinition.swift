import Configuration

/// The kind of value a setting holds, with the values it accepts.
public enum SettingKind: Sendable, Hashable {
    /// Free text.
    case text
    /// One of a fixed set of words.
    case choice([String])
    /// A whole number within a range.
    case integer(ClosedRange<Int>)
    /// A duration in seconds (a number, fractions allowed) within a range.
    case seconds(ClosedRange<Double>)
    /// `true` or `false`.
    case boolean
    /// `HOST:PORT` to listen on or connect to; port 0 picks a free port when listening.
    case address
    /// A comma-separated list of `HOST:PORT`.
    case addressList
    /// An absolute `http` or `https` URL.
    case url
    /// A path in the file system.
    case filePath
    /// A list of words, each from `allowed` when it is given.
    case list(allowed: [String]?)
    /// A map of names to text values (librdkafka properties). In the file an object; in the
    /// environment and on the command line a comma-separated list of `name=value`.
    case properties

    /// How this kind is asked of a swift-configuration provider.
    var configType: ConfigType {
        switch self {
        case .text, .choice, .address, .addressList, .url, .filePath: .string
        case .integer: .int
        case .seconds: .double
        case .boolean: .bool
        case .list, .properties: .stringArray
        }
    }

    /// The accepted values, as a reader of the reference sees them.
    public var explanation: String {
        switch self {
        case .text: "text"
        case .choice(let words): "one of " + words.map { "`\($0)`" }.joined(separator: ", ")
        case .integer(let range): "integer, \(range.lowerBound)…\(range.upperBound)"
        case .seconds(let range): "seconds, \(range.lowerBound.formattedSetting)…\(range.upperBound.formattedSetting)"
        case .boolean: "`true` or `false`"
        case .address: "`HOST:PORT`"
        case .addressList: "`HOST:PORT,...`"
        case .url: "http(s) URL"
        case .filePath: "file path"
        case .list(let allowed?): "list of " + allowed.map { "`\($0)`" }.joined(separator: ", ")
        case .list(nil): "list of text"
        case .properties: "map of name to text"
        }
    }
}

/// A setting's value once read and checked.
public enum SettingValue: Sendable, Hashable, CustomStringConvertible {
    case text(String)
    case integer(Int)
    case seconds(Double)
    case boolean(Bool)
    case list([String])
    case properties([String: String])

    public var description: String {
        switch self {
        case .text(let value): value
        case .integer(let value): String(value)
        case .seconds(let value): value.formattedSetting
        case .boolean(let value): String(value)
        case .list(let values): values.joined(separator: ",")
        case .properties(let map): map.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
    }
}

/// One documented setting: its dotted key (the path in the config file), kind, default and meaning.
///
/// The environment variable of a setting is `NOTIFY_` followed by its key in upper snake case
/// (`pipeline.identityWait` → `NOTIFY_PIPELINE_IDENTITY_WAIT`); on the command line every setting can
/// be given as `--set KEY=VALUE`.
public struct SettingDefinition: Sendable {
    /// The dotted key, e.g. `kafka.bootstrap`.
    public let key: String
    public let kind: SettingKind
    /// The value when no layer sets it; `nil` when the setting is unset by default.
    public let defaultValue: SettingValue?
    /// What the setting does, one or two sentences.
    public let summary: String
    /// A dedicated command-line flag that sets it as well as `--set`, e.g. `--bootstrap`.
    public let flag: String?
    /// Other environment variable names read for it (after the canonical one).
    public let environmentAliases: [String]

    init(
        _ key: String, _ kind: SettingKind, default defaultValue: SettingValue? = nil, flag: String? = nil,
        environmentAliases: [String] = [], _ summary: String
    ) {
        self.key = key
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
        self.flag = flag
        self.environmentAliases = environmentAliases
    }

    /// The canonical environment variable, as swift-configuration encodes the key under `notify`
    /// (`pipeline.identityWait` → `NOTIFY_PIPELINE_IDENTITY_WAIT`).
    public var environmentVariable: String { SettingsLoader.environmentVariableName(self) }

    /// The key as swift-configuration components.
    var configKey: AbsoluteConfigKey { AbsoluteConfigKey(key.split(separator: ".").map(String.init)) }

    /// Checks a value a provider returned against this setting's kind and range.
    /// - Returns: the value, or why it is refused.
    func check(_ content: ConfigContent) -> Result<SettingValue, SettingsProblem.Kind> {
        switch (kind, content) {
        case (.text, .string(let text)), (.filePath, .string(let text)):
            return text.isEmpty ? .failure(.invalidValue("must not be empty")) : .success(.text(text))
        case (.choice(let words), .string(let word)):
            guard words.contains(word) else {
                return .failure(
                    .invalidValue(
                        "\"\(word)\" is not one of \(words.joined(separator: ", "))"
                            + suggestionSuffix(word, among: words)))
            }
            return .success(.text(word))
        case (.integer(let range), .int(let number)):
            guard range.contains(number) else {
                return .failure(.outOfRange("\(number) is outside \(range.lowerBound)…\(range.upperBound)"))
            }
            return .success(.integer(number))
        case (.seconds(let range), .double(let number)):
            guard range.contains(number) else {
                return .failure(
                    .outOfRange(
                        "\(number.formattedSetting) s is outside \(range.lowerBound.formattedSetting)…\(range.upperBound.formattedSetting) s"
                    ))
            }
            return .success(.seconds(number))
        case (.seconds, .int(let number)):
            return check(.double(Double(number)))
        case (.boolean, .bool(let flag)):
            return .success(.boolean(flag))
        case (.address, .string(let text)):
            return HostAndPort.parse(text).map { _ in .text(text) }.mapError { .invalidValue($0.reason) }
        case (.addressList, .string(let text)):
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                if case .failure(let error) = HostAndPort.parse(String(part)) {
                    return .failure(.invalidValue(error.reason))
                }
            }
            return .success(.text(text))
        case (.url, .string(let text)):
            guard let scheme = text.split(separator: ":", maxSplits: 1).first?.lowercased(),
                scheme == "http" || scheme == "https", text.contains("://"),
                text.count > scheme.count + 3
            else { return .failure(.invalidValue("\"\(text)\" is not an http(s) URL")) }
            return .success(.text(text))
        case (.list(let allowed), .stringArray(let words)):
            if let allowed, let bad = words.first(where: { !allowed.contains($0) }) {
                return .failure(
                    .invalidValue(
                        "\"\(bad)\" is not one of \(allowed.joined(separator: ", "))"
                            + suggestionSuffix(bad, among: allowed)))
            }
            return .success(.list(words))
        case (.properties, .stringArray(let pairs)):
            var map: [String: String] = [:]
            for pair in pairs {
                guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                    return .failure(.invalidValue("\"\(pair)\" is not name=value"))
                }
                map[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
            return .success(.properties(map))
        default:
            return .failure(.wrongType(expected: kind.explanation, found: content.typeDescription))
        }
    }
}

/// " (did you mean "x"?)" when a word is close to one of the candidates.
func suggestionSuffix(_ word: String, among candidates: [String]) -> String {
    guard let suggestion = closestMatch(to: word, among: candidates) else { return "" }
    return "; did you mean \"\(suggestion)\"?"
}

/// The candidate nearest to `word` by edit distance, when it is near enough to be a typo.
public func closestMatch(to word: String, among candidates: [String]) -> String? {
    let limit = max(2, word.count / 3)
    let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit else { return nil }
    return best.0
}

/// Levenshtein distance between two strings, by characters.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

extension ConfigContent {
    /// The JSON-ish name of this value's type, for error messages.
    var typeDescription: String {
        switch self {
        case .string(let text): "text \"\(text)\""
        case .int(let number): "integer \(number)"
        case .double(let number): "number \(number)"
        case .bool(let flag): "boolean \(flag)"
        case .stringArray, .intArray, .doubleArray, .boolArray: "a list"
        case .bytes, .byteChunkArray: "bytes"
        }
    }
}

extension Double {
    /// `2` for 2.0, `0.5` for 0.5: how durations read in the reference and messages.
    var formattedSetting: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
