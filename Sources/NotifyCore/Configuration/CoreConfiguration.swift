import Foundation

/// Everything the folds need to know besides the events: waits, limits,
/// the policies and categories from `Schemas/`, and the generic texts.
public struct CoreConfiguration: Sendable {
    /// How long, in event time, a message from an unknown sender waits for its identity (rule 9).
    public var identityWaitMilliseconds: Int64 = Self.defaultIdentityWaitMilliseconds
    /// A client state older than this (event time) counts as unknown (rule 7).
    public var clientStateMaxAgeMilliseconds: Int64 = Self.defaultClientStateMaxAgeMilliseconds
    /// The least time between two background pushes to one device (rule 12).
    public var backgroundPushIntervalMilliseconds: Int64 = Self.defaultBackgroundPushIntervalMilliseconds

    /// The defaults, which the settings (`pipeline.identityWait`, `pipeline.clientStateMaxAge`,
    /// `pipeline.backgroundPushInterval`) take as theirs: one default for `pipeline`, `render` and `replay`.
    public static let defaultIdentityWaitMilliseconds: Int64 = 2_000
    public static let defaultClientStateMaxAgeMilliseconds: Int64 = 300_000
    public static let defaultBackgroundPushIntervalMilliseconds: Int64 = 5_000
    /// How many recent local deliveries per user are kept to re-send on the push path.
    public var recentLocalLimit = 32
    public var policies: NotificationPolicies
    public var categories: NotificationCategories
    public var texts = GenericTexts()

    public init(policies: NotificationPolicies, categories: NotificationCategories) {
        self.policies = policies
        self.categories = categories
    }

    /// Loads `policies.json` and `categories.json` from the Schemas directory;
    /// a bad file is refused with a message naming the file and the field.
    public static func load(schemasDirectory: String) throws -> CoreConfiguration {
        func read(_ name: String) throws -> [UInt8] {
            let path = (schemasDirectory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(source: path, problem: "cannot read the file")
            }
            return [UInt8](data)
        }
        let policiesPath = (schemasDirectory as NSString).appendingPathComponent("policies.json")
        let categoriesPath = (schemasDirectory as NSString).appendingPathComponent("categories.json")
        return CoreConfiguration(
            policies: try NotificationPolicies(json: read("policies.json"), source: policiesPath),
            categories: try NotificationCategories(json: read("categories.json"), source: categoriesPath))
    }
}

/// The texts the core writes itself (English).
public struct GenericTexts: Sendable, Hashable {
    /// The body when previews are `never` (rule 8).
    public var hiddenPreviewBody = "New message"
    /// The sender's name when neither the identity nor a handle is known (rule 9).
    public var unknownSender = "Someone"
    /// The title of a group without a name.
    public var unnamedGroup = "Group"

    public init() {}

    /// What was sent, for a message without text or whose attachment was dropped (rule 10).
    public func sentDescription(_ kind: MessageKind) -> String {
        switch kind {
        case .text: "Sent a message"
        case .image: "Sent a photo"
        case .video: "Sent a video"
        case .audio: "Sent a voice message"
        case .sticker: "Sent a sticker"
        case .file: "Sent a file"
        }
    }
}
