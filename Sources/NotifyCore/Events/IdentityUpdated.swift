/// `identity.updated` on `chat.identities` (key: user id).
public struct IdentityUpdated: ChatEvent {
    public static let eventType = "identity.updated"
    public static let topic = Topic.identities
    public var id: String
    public var at: EventTime
    public var userId: String
    public var displayName: String
    public var handle: String?
    public var imageURL: String?
    public var key: String { userId }

    public init(
        id: String, at: EventTime, userId: String, displayName: String, handle: String? = nil, imageURL: String? = nil
    ) {
        self.id = id
        self.at = at
        self.userId = userId
        self.displayName = displayName
        self.handle = handle
        self.imageURL = imageURL
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId", "displayName", "handle", "imageURL"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
        displayName = try fields.string("displayName", maxLength: 256)
        handle = try fields.optionalString("handle", maxLength: 256)
        imageURL = try fields.optionalURL("imageURL")
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 7)
        object["userId"] = .string(userId)
        object["displayName"] = .string(displayName)
        object.set("handle", handle)
        object.set("imageURL", imageURL)
        return object.value
    }
}
