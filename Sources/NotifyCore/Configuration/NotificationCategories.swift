/// The notification categories and their actions (rule 11), loaded from
/// `Schemas/categories.json`; the apps register the same file with
/// `UNUserNotificationCenter.setNotificationCategories`.
public struct NotificationCategories: Sendable, Hashable {
    /// One action button of a category.
    public struct Action: Sendable, Hashable {
        public enum Option: String, Sendable, Hashable, CaseIterable {
            case foreground, destructive, authenticationRequired
        }

        public var identifier: String
        public var title: String
        public var options: [Option]
        /// For a text-input action (reply): the button title and the placeholder.
        public var textInput: (buttonTitle: String, placeholder: String)? {
            get { textInputButtonTitle.map { ($0, textInputPlaceholder ?? "") } }
            set {
                textInputButtonTitle = newValue?.buttonTitle
                textInputPlaceholder = newValue?.placeholder
            }
        }
        var textInputButtonTitle: String?
        var textInputPlaceholder: String?
    }

    /// One category: its identifier, actions and options.
    public struct Category: Sendable, Hashable {
        public enum Option: String, Sendable, Hashable, CaseIterable {
            case customDismissAction, allowInCarPlay, hiddenPreviewsShowTitle, hiddenPreviewsShowSubtitle
        }

        public var identifier: String
        public var actions: [Action]
        public var options: [Option]
    }

    /// The categories by identifier.
    public var byIdentifier: [String: Category]

    /// The category every message notification uses.
    public static let messageCategory = "message"

    /// Reads and validates a categories file.
    public init(json bytes: some Collection<UInt8>, source: String = "categories.json") throws(ConfigurationError) {
        do {
            let fields = try FieldReader(CoreJSON.parse(bytes))
            try fields.rejectUnknown(allowed: ["$schema", "categories"])
            var byIdentifier: [String: Category] = [:]
            for element in try fields.array("categories") {
                let category = try Self.category(FieldReader(element.value, path: element.path))
                guard byIdentifier.updateValue(category, forKey: category.identifier) == nil else {
                    throw FieldError(
                        field: element.path + ".identifier", problem: "duplicate category \"\(category.identifier)\"")
                }
            }
            guard byIdentifier[Self.messageCategory] != nil else {
                throw FieldError(field: "categories", problem: "no \"\(Self.messageCategory)\" category")
            }
            self.byIdentifier = byIdentifier
        } catch {
            throw ConfigurationError(source: source, reading: error)
        }
    }

    private static func category(_ fields: FieldReader) throws(FieldError) -> Category {
        try fields.rejectUnknown(allowed: ["identifier", "actions", "options"])
        var actions: [Action] = []
        for element in try fields.array("actions") {
            let reader = try FieldReader(element.value, path: element.path)
            try reader.rejectUnknown(allowed: ["identifier", "title", "options", "textInput"])
            var textInputButtonTitle: String?
            var textInputPlaceholder: String?
            if let textInput = try reader.optionalObject("textInput") {
                try textInput.rejectUnknown(allowed: ["buttonTitle", "placeholder"])
                textInputButtonTitle = try textInput.string("buttonTitle")
                textInputPlaceholder = try textInput.string("placeholder")
            }
            actions.append(
                Action(
                    identifier: try reader.string("identifier"), title: try reader.string("title"),
                    options: try options(reader, "options"),
                    textInputButtonTitle: textInputButtonTitle, textInputPlaceholder: textInputPlaceholder))
        }
        return Category(
            identifier: try fields.string("identifier"), actions: actions, options: try options(fields, "options"))
    }

    private static func options<Option: RawRepresentable & CaseIterable>(_ fields: FieldReader, _ key: String)
        throws(FieldError) -> [Option]
    where Option.RawValue == String {
        guard fields.optionalValue(key) != nil else { return [] }
        var result: [Option] = []
        for element in try fields.array(key) {
            guard case .string(let raw) = element.value, let option = Option(rawValue: raw) else {
                let allowed = Option.allCases.map(\.rawValue).joined(separator: ", ")
                throw FieldError(
                    field: element.path, problem: "\(element.value.kindName) is not an option (allowed: \(allowed))")
            }
            result.append(option)
        }
        return result
    }
}
