/// One device of a user, as listed in `devices.updated`.
public struct Device: Sendable, Hashable, Codable {
    public var deviceId: String
    public var platform: Platform
    public var provider: PushProvider
    public var token: String
    /// The app's bundle id (the APNs topic) or Android package.
    public var appId: String
    public var locale: String?

    public init(
        deviceId: String, platform: Platform, provider: PushProvider, token: String, appId: String,
        locale: String? = nil
    ) {
        self.deviceId = deviceId
        self.platform = platform
        self.provider = provider
        self.token = token
        self.appId = appId
        self.locale = locale
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["deviceId", "platform", "provider", "token", "appId", "locale"])
        deviceId = try fields.string("deviceId")
        platform = try fields.choice("platform")
        provider = try fields.choice("provider")
        token = try fields.string("token", maxLength: 4096)
        appId = try fields.string("appId", maxLength: 255)
        locale = try fields.optionalString("locale", maxLength: 35)
        if platform == .android, provider == .apns {
            throw fields.error("provider", "an android device cannot be reached through apns")
        }
    }

    var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 6)
        object["deviceId"] = .string(deviceId)
        object["platform"] = .string(platform.rawValue)
        object["provider"] = .string(provider.rawValue)
        object["token"] = .string(token)
        object["appId"] = .string(appId)
        object.set("locale", locale)
        return object.value
    }
}

/// `devices.updated` on `chat.devices` (key: user id): the user's whole device list.
public struct DevicesUpdated: ChatEvent {
    public static let eventType = "devices.updated"
    public static let topic = Topic.devices
    public var id: String
    public var at: EventTime
    public var userId: String
    public var devices: [Device]
    public var key: String { userId }

    public init(id: String, at: EventTime, userId: String, devices: [Device]) {
        self.id = id
        self.at = at
        self.userId = userId
        self.devices = devices
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId", "devices"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
        var devices: [Device] = []
        var seen = Set<String>()
        for element in try fields.array("devices") {
            let device = try Device(reading: FieldReader(element.value, path: element.path))
            guard seen.insert(device.deviceId).inserted else {
                throw FieldError(field: element.path + ".deviceId", problem: "duplicate device \"\(device.deviceId)\"")
            }
            devices.append(device)
        }
        self.devices = devices
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 5)
        object["userId"] = .string(userId)
        object["devices"] = .array(devices.map(\.jsonValue))
        return object.value
    }
}
