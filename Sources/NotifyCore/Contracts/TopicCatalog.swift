import Foundation

/// Every topic of the system, as `Schemas/topics.json` lists them: name, the
/// event field that is the record key, default partitions, cleanup policy and retention.
public struct TopicCatalog: Sendable, Codable, Hashable {
    public var topics: [Topic]

    /// One topic.
    public struct Topic: Sendable, Codable, Hashable {
        public var name: String
        /// The field of the value that is the record key (e.g. `conversationId`, `userId`).
        public var key: String
        public var partitions: Int32
        /// `delete` or `compact`.
        public var cleanupPolicy: String
        /// `retention.ms`; nil keeps the cluster's default, -1 keeps forever.
        public var retentionMs: Int64?
    }

    public init(topics: [Topic]) {
        self.topics = topics
    }

    /// Loads and checks a catalog file; errors name the file and what is wrong.
    public static func load(from url: URL) throws -> TopicCatalog {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw TopicCatalogError("cannot read the topic catalog \(url.path): \(error.localizedDescription)")
        }
        let catalog: TopicCatalog
        do { catalog = try JSONDecoder().decode(TopicCatalog.self, from: data) } catch {
            throw TopicCatalogError("the topic catalog \(url.path) is not valid: \(error)")
        }
        for topic in catalog.topics where topic.partitions < 1 {
            throw TopicCatalogError("the topic catalog \(url.path): \(topic.name) needs at least one partition")
        }
        return catalog
    }

    /// The topic called `name`.
    public func topic(_ name: String) -> Topic? {
        topics.first { $0.name == name }
    }
}

/// A topic catalog that cannot be used.
public struct TopicCatalogError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
