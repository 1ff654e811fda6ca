import Foundation
import NotifyCore

extension SchemasOption {
    /// The topic catalog, `topics.json` in the Schemas directory.
    func loadTopicCatalog() throws -> TopicCatalog {
        try TopicCatalog.load(from: URL(fileURLWithPath: directory).appendingPathComponent("topics.json"))
    }
}
