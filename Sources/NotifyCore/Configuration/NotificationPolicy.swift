/// How one type of notification is delivered (rule 13): the values of one
/// entry of `Schemas/policies.json`.
public struct NotificationPolicy: Sendable, Hashable, Codable {
    /// `apns-push-type`.
    public enum PushType: String, Sendable, Hashable, Codable, CaseIterable {
        case alert, background
    }

    /// FCM `android.priority`.
    public enum AndroidPriority: String, Sendable, Hashable, Codable, CaseIterable {
        case high, normal
    }

    /// `aps.interruption-level`.
    public enum InterruptionLevel: String, Sendable, Hashable, Codable, CaseIterable {
        case passive, active
        case timeSensitive = "time-sensitive"
        case critical
    }

    public var pushType: PushType
    /// `apns-priority`: 10 (immediately), 5 (power-considerate) or 1 (low).
    public var apnsPriority: Int
    /// How long the platforms keep trying, 0…2,419,200 s (28 days).
    public var ttlSeconds: Int64
    /// `apns-collapse-id` and FCM `collapse_key`, at most 64 bytes.
    public var collapseKey: String?
    public var androidPriority: AndroidPriority
    /// The Android notification channel (alert pushes only).
    public var androidChannel: String?
    public var sound: String?
    public var interruptionLevel: InterruptionLevel?
    /// FCM `android.notification.click_action`: the intent action a tap starts (alert pushes only).
    /// Unset, FCM's default: a tap opens the app's launcher activity.
    public var androidClickAction: String?

    public init(
        pushType: PushType, apnsPriority: Int, ttlSeconds: Int64, collapseKey: String? = nil,
        androidPriority: AndroidPriority, androidChannel: String? = nil, sound: String? = nil,
        interruptionLevel: InterruptionLevel? = nil, androidClickAction: String? = nil
    ) {
        self.pushType = pushType
        self.apnsPriority = apnsPriority
        self.ttlSeconds = ttlSeconds
        self.collapseKey = collapseKey
        self.androidPriority = androidPriority
        self.androidChannel = androidChannel
        self.sound = sound
        self.interruptionLevel = interruptionLevel
        self.androidClickAction = androidClickAction
    }

    /// The largest TTL the platforms accept: 28 days.
    public static let maximumTTLSeconds: Int64 = 2_419_200
    /// The longest `apns-collapse-id` APNs accepts, in bytes.
    public static let maximumCollapseKeyBytes = 64
    /// FCM keeps at most four collapse keys per device.
    public static let maximumCollapseKeys = 4

    /// The fields of a policy in `policies.json`: name, what it accepts and what it
    /// does, for the configuration reference (`docs/configuration.md`).
    public static let reference: [(field: String, accepts: String, meaning: String)] = [
        (
            "pushType", "`alert` or `background`",
            "`apns-push-type`; a background push has no alert, channel, sound, interruption level or click action."
        ),
        ("apnsPriority", "10, 5 or 1", "`apns-priority` (a background push: 5)."),
        ("ttlSeconds", "integer, 0…2419200", "How long APNs and FCM keep trying (`apns-expiration`, `android.ttl`)."),
        (
            "collapseKey", "text, at most 64 bytes",
            "`apns-collapse-id` and FCM `collapse_key`; at most 4 different keys in all. Unset: none."
        ),
        ("androidPriority", "`high` or `normal`", "FCM `android.priority` (a background push: `normal`)."),
        (
            "androidChannel", "text",
            "Android notification channel (`android.notification.channel_id`); required for an alert."
        ),
        ("sound", "text", "`aps.sound` and `android.notification.sound`. Unset: not sent."),
        (
            "interruptionLevel", "`passive`, `active`, `time-sensitive` or `critical`",
            "`aps.interruption-level`. Unset: not sent."
        ),
        (
            "androidClickAction", "text",
            "`android.notification.click_action`: the intent action a tap on an Android notification starts; only an activity with a matching intent filter opens. Unset (the default in `Schemas/policies.json`): a tap opens the app's launcher activity."
        ),
    ]

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: Self.reference.map(\.field))
        pushType = try fields.choice("pushType")
        apnsPriority = Int(try fields.integer("apnsPriority", minimum: 1))
        ttlSeconds = try fields.integer("ttlSeconds", minimum: 0)
        collapseKey = try fields.optionalString("collapseKey")
        androidPriority = try fields.choice("androidPriority")
        androidChannel = try fields.optionalString("androidChannel")
        sound = try fields.optionalString("sound")
        interruptionLevel = try fields.optionalChoice("interruptionLevel")
        androidClickAction = try fields.optionalString("androidClickAction")
        try validate(fields)
    }

    /// Rule 14: refuse what the platforms refuse.
    private func validate(_ fields: FieldReader) throws(FieldError) {
        guard [1, 5, 10].contains(apnsPriority) else {
            throw fields.error("apnsPriority", "must be 10, 5 or 1, got \(apnsPriority)")
        }
        guard ttlSeconds <= Self.maximumTTLSeconds else {
            throw fields.error(
                "ttlSeconds", "must be within 0…\(Self.maximumTTLSeconds) s (28 days), got \(ttlSeconds)")
        }
        if let collapseKey, collapseKey.utf8.count > Self.maximumCollapseKeyBytes {
            throw fields.error(
                "collapseKey",
                "is \(collapseKey.utf8.count) bytes; APNs refuses an apns-collapse-id over \(Self.maximumCollapseKeyBytes) bytes"
            )
        }
        switch pushType {
        case .background:
            guard apnsPriority == 5 else {
                throw fields.error(
                    "apnsPriority", "a background push must use priority 5 (APNs refuses priority \(apnsPriority))")
            }
            guard androidPriority == .normal else {
                throw fields.error("androidPriority", "a data-only (background) push must use normal priority")
            }
            for key in ["androidChannel", "sound", "interruptionLevel", "androidClickAction"]
            where fields.optionalValue(key) != nil {
                throw fields.error(key, "a background push has no alert, so it has no \(key)")
            }
        case .alert:
            guard androidChannel != nil else {
                throw fields.error("androidChannel", "an alert needs an Android notification channel")
            }
        }
    }
}

/// The policies of every notification type, loaded from `Schemas/policies.json`.
public struct NotificationPolicies: Sendable, Hashable {
    /// The policy of each notification type.
    public var byType: [String: NotificationPolicy]

    /// The types the core emits: each must have a policy.
    public static let requiredTypes = ["message", "mention", "badge"]

    /// Reads and validates a policies file; a bad file is refused with a
    /// message naming the policy and the field.
    public init(json bytes: some Collection<UInt8>, source: String = "policies.json") throws(ConfigurationError) {
        do {
            let fields = try FieldReader(CoreJSON.parse(bytes))
            try fields.rejectUnknown(allowed: ["$schema", "policies"])
            let policies = try fields.object("policies")
            var byType: [String: NotificationPolicy] = [:]
            for type in policies.keys.sorted() {
                byType[type] = try NotificationPolicy(reading: policies.object(type))
            }
            for type in Self.requiredTypes where byType[type] == nil {
                throw policies.error(
                    type,
                    "missing: every notification type the core emits (\(Self.requiredTypes.joined(separator: ", "))) needs a policy"
                )
            }
            let collapseKeys = Set(byType.values.compactMap(\.collapseKey))
            guard collapseKeys.count <= NotificationPolicy.maximumCollapseKeys else {
                throw FieldError(
                    field: "policies",
                    problem:
                        "\(collapseKeys.count) collapse keys (\(collapseKeys.sorted().joined(separator: ", "))); FCM keeps at most \(NotificationPolicy.maximumCollapseKeys)"
                )
            }
            self.byType = byType
        } catch {
            throw ConfigurationError(source: source, reading: error)
        }
    }

    /// The policy of `type`; the `message` policy for a type without one.
    /// The longest TTL of any type: after that no delivery of a message can still be made.
    public var longestTTLSeconds: Int64 { byType.values.map(\.ttlSeconds).max() ?? 0 }

    public subscript(type: String) -> NotificationPolicy {
        byType[type] ?? byType["message"]!
    }
}

/// A configuration file the core refuses, and why.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var problem: String

    public init(source: String, problem: String) {
        self.source = source
        self.problem = problem
    }

    public var description: String { "\(source): \(problem)" }

    /// What went wrong reading `source`, whatever the failure was.
    init(source: String, reading error: any Error) {
        switch error {
        case let error as JSONSyntaxError: self.init(source: source, problem: error.description)
        case let error as FieldError: self.init(source: source, problem: "\(error.field): \(error.problem)")
        default: self.init(source: source, problem: "\(error)")
        }
    }
}
