/// The samples of one family that `/metrics` writes itself rather than through the registry.
struct FamilySamples: Sendable {
    var family: MetricFamily
    var samples: [(labels: [(String, String)], value: Double)] = []

    init(_ name: String, _ samples: [(labels: [(String, String)], value: Double)] = []) {
        family = MetricName.family(named: name)
        self.samples = samples
    }
}

/// The Prometheus text exposition (format 0.0.4) being put together: the registry's text, then the
/// families written here, each with its `# HELP` and `# TYPE` lines.
struct ExpositionText {
    private(set) var text: String

    init(_ registryText: String) {
        text = registryText
        if !text.isEmpty, !text.hasSuffix("\n") { text += "\n" }
    }

    /// Writes `families` with their samples.
    mutating func append(_ families: [FamilySamples]) {
        for entry in families {
            declare(entry.family)
            for sample in entry.samples {
                text += entry.family.name
                if !sample.labels.isEmpty {
                    text +=
                        "{" + sample.labels.map { "\($0.0)=\"\(Self.escapedLabelValue($0.1))\"" }.joined(separator: ",")
                        + "}"
                }
                text += " \(sample.value)\n"
            }
        }
    }

    /// Writes the `# HELP` and `# TYPE` lines of `family` unless it is in the text already: a family
    /// with no series yet (a gauge per partition before any assignment) is still declared.
    mutating func declareIfAbsent(_ family: MetricFamily) {
        if !text.contains("# TYPE \(family.name) ") { declare(family) }
    }

    private mutating func declare(_ family: MetricFamily) {
        let help = family.help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
        text += "# HELP \(family.name) \(help)\n# TYPE \(family.name) \(family.type.rawValue)\n"
    }

    private static func escapedLabelValue(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
