/// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every line
/// must be a comment, a `# TYPE`/`# HELP` line or a well-formed sample.
public struct PrometheusText: Sendable {
    public struct Malformed: Error, CustomStringConvertible {
        public var line: String
        public var description: String { "not Prometheus text: \(line)" }
    }

    /// Family name → its `# TYPE`.
    public var types: [String: String] = [:]
    /// Family name → its `# HELP` text (unescaped).
    public var helps: [String: String] = [:]
    public var samples: [(name: String, labels: [String: String], value: Double)] = []

    /// The value of the sample `name` with exactly `labels`, if there is one.
    public func value(_ name: String, _ labels: [String: String]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The samples of family `name` (for a histogram, also its `_bucket`, `_sum` and `_count` samples).
    public func samples(of name: String) -> [(name: String, labels: [String: String], value: Double)] {
        samples.filter { sample in family(ofSample: sample.name) == name }
    }

    public static func parse(_ text: String) throws -> PrometheusText {
        var result = PrometheusText()
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let type = line.wholeMatch(
                of: /# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)/)
            {
                guard result.types.updateValue(String(type.2), forKey: String(type.1)) == nil else {
                    throw Malformed(line: String(line))
                }
                continue
            }
            if let help = line.wholeMatch(of: /# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)/) {
                let text = String(help.2).replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(
                    of: "\\\\", with: "\\")
                guard result.helps.updateValue(text, forKey: String(help.1)) == nil else {
                    throw Malformed(line: String(line))
                }
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let sample = line.wholeMatch(of: /([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([^ ]+)( -?[0-9]+)?/),
                let value = Double(sample.3) ?? (sample.3 == "+Inf" ? .infinity : nil)
            else { throw Malformed(line: String(line)) }
            var labels: [String: String] = [:]
            if let body = sample.2?.dropFirst().dropLast(), !body.isEmpty {
                for pair in body.matches(of: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/) {
                    labels[String(pair.1)] = String(pair.2)
                }
                guard
                    body.matches(of: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/).map({ $0.0.count }).reduce(0, +)
                        == body.count
                else { throw Malformed(line: String(line)) }
            }
            result.samples.append((String(sample.1), labels, value))
        }
        return result
    }

    /// The family a sample name belongs to: its own name, or a histogram's for `_bucket`, `_sum`, `_count`.
    public func family(ofSample name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let family = String(name.dropLast(suffix.count))
            if types[family] == "histogram" { return family }
        }
        return nil
    }
}
