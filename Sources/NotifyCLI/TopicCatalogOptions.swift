import ArgumentParser
import Foundation
import NotifyCore

/// Where the schemas (and so the topic catalog) are: `--schemas DIR`, env
/// `NOTIFY_SCHEMAS`, or `Schemas/` in the current directory.
struct TopicCatalogOptions: ParsableArguments {
    @Option(name: .long, help: "The Schemas directory (env NOTIFY_SCHEMAS; default ./Schemas).")
    var schemas: String?

    var schemasDirectory: URL {
        let path = schemas ?? ProcessInfo.processInfo.environment["NOTIFY_SCHEMAS"] ?? "Schemas"
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    func load() throws -> TopicCatalog {
        try TopicCatalog.load(from: schemasDirectory.appendingPathComponent("topics.json"))
    }
}
