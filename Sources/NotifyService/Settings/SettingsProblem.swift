/// One thing wrong with the configuration, with where it was found.
public struct SettingsProblem: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Kind: Error, Sendable, Hashable {
        /// A key no setting has; `suggestion` is the nearest real key.
        case unknownKey(suggestion: String?)
        case wrongType(expected: String, found: String)
        case outOfRange(String)
        case invalidValue(String)
        /// The file is missing or is not JSON.
        case unreadable(String)
    }

    /// Where the value came from: the file name, `environment variable NAME` or `flag ...`.
    public var source: String
    /// The dotted path of the setting, e.g. `kafka.bootstrap` (empty for the whole file).
    public var path: String
    public var kind: Kind

    public init(source: String, path: String, kind: Kind) {
        self.source = source
        self.path = path
        self.kind = kind
    }

    /// `notify.json: kafka.bootstap: unknown setting; did you mean "kafka.bootstrap"?`
    public var description: String {
        let location = path.isEmpty ? source : "\(source): \(path)"
        switch kind {
        case .unknownKey(let suggestion?): return "\(location): unknown setting; did you mean \"\(suggestion)\"?"
        case .unknownKey(nil): return "\(location): unknown setting"
        case .wrongType(let expected, let found): return "\(location): expected \(expected), found \(found)"
        case .outOfRange(let message): return "\(location): out of range: \(message)"
        case .invalidValue(let message): return "\(location): invalid value: \(message)"
        case .unreadable(let message): return "\(location): \(message)"
        }
    }
}

/// The configuration could not be loaded: every problem found, not just the first.
public struct SettingsError: Error, Sendable, CustomStringConvertible {
    public var problems: [SettingsProblem]

    public var description: String {
        "Invalid configuration (\(problems.count) problem\(problems.count == 1 ? "" : "s")):\n"
            + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}
