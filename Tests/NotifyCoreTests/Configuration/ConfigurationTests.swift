import Testing

@testable import NotifyCore

@Suite struct ConfigurationTests {
    static let goodMessage =
        #""message": {"pushType": "alert", "apnsPriority": 10, "ttlSeconds": 60, "androidPriority": "high", "androidChannel": "messages"}"#
    static let goodMention =
        #""mention": {"pushType": "alert", "apnsPriority": 10, "ttlSeconds": 60, "androidPriority": "high", "androidChannel": "mentions"}"#

    func policies(_ badge: String, extra: String = "") -> String {
        #"{"policies": {"# + Self.goodMessage + "," + Self.goodMention + "," + #""badge": "# + badge + extra + "}}"
    }

    func refusal(_ json: String) -> String? {
        do {
            _ = try NotificationPolicies(json: json.bytes)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func theShippedFilesLoad() throws {
        let configuration = try Repository.configuration()
        #expect(configuration.policies["badge"].pushType == .background)
        #expect(configuration.policies["mention"].interruptionLevel == .timeSensitive)
        let message = try #require(configuration.categories.byIdentifier["message"])
        #expect(message.options == [.customDismissAction])
        let reply = try #require(message.actions.first { $0.identifier == "reply" })
        #expect(reply.textInput?.buttonTitle == "Send")
        #expect(reply.textInput?.placeholder == "Message")
        #expect(message.actions.contains { $0.identifier == "mute" && $0.options == [.destructive] })
    }

    @Test func aGoodPolicyFileLoads() {
        #expect(
            refusal(
                policies(
                    #"{"pushType": "background", "apnsPriority": 5, "ttlSeconds": 60, "androidPriority": "normal", "collapseKey": "badge"}"#
                )) == nil)
    }

    @Test(arguments: [
        (
            #"{"pushType": "background", "apnsPriority": 10, "ttlSeconds": 60, "androidPriority": "normal"}"#,
            "policies.badge.apnsPriority: a background push must use priority 5"
        ),
        (
            #"{"pushType": "background", "apnsPriority": 5, "ttlSeconds": 2419201, "androidPriority": "normal"}"#,
            "policies.badge.ttlSeconds: must be within 0…2419200 s"
        ),
        (
            #"{"pushType": "background", "apnsPriority": 5, "ttlSeconds": 60, "androidPriority": "normal", "collapseKey": "\#(String(repeating: "k", count: 65))"}"#,
            "policies.badge.collapseKey: is 65 bytes"
        ),
        (
            #"{"pushType": "background", "apnsPriority": 5, "ttlSeconds": 60, "androidPriority": "normal", "sound": "default"}"#,
            "policies.badge.sound: a background push has no alert"
        ),
        (
            #"{"pushType": "alert", "apnsPriority": 7, "ttlSeconds": 60, "androidPriority": "high", "androidChannel": "x"}"#,
            "policies.badge.apnsPriority: must be 10, 5 or 1"
        ),
        (
            #"{"pushType": "loud", "apnsPriority": 10, "ttlSeconds": 60, "androidPriority": "high"}"#,
            "policies.badge.pushType: \"loud\" is not one of"
        ),
        (
            #"{"pushType": "background", "apnsPriority": 5, "ttlSeconds": 60, "androidPriority": "normal", "androidClickAction": "x"}"#,
            "policies.badge.androidClickAction: a background push has no alert"
        ),
    ])
    func aBadPolicyIsRefusedWithAClearMessage(_ badge: String, _ expected: String) throws {
        let message = try #require(refusal(policies(badge)))
        #expect(message.hasPrefix("policies.json: "))
        #expect(message.contains(expected), "\(message)")
    }

    /// Seed 001: a tap on an FCM notification opens the app unless the message names an intent action.
    @Test func androidClickActionIsSentOnlyWhenThePolicyNamesOne() throws {
        var configuration = try Repository.configuration()
        #expect(configuration.policies["message"].androidClickAction == nil)
        let record = EventFactory.record("m1", in: "c", for: "r", at: 1, configuration: configuration)
        func clickAction(_ configuration: CoreConfiguration) -> JSONValue? {
            CommandBuilder(configuration: configuration).messageCommand(
                record, content: record.content, device: EventFactory.pixel("a"), path: .push
            )
            .fcm?.message["android"]?["notification"]?["click_action"]
        }
        #expect(clickAction(configuration) == nil)
        let named =
            #""message": {"pushType": "alert", "apnsPriority": 10, "ttlSeconds": 60, "androidPriority": "high", "androidChannel": "messages", "androidClickAction": "OPEN_CONVERSATION"}"#
        configuration.policies = try NotificationPolicies(
            json: (#"{"policies": {"# + named + "," + Self.goodMention + ","
                + #""badge": {"pushType": "background", "apnsPriority": 5, "ttlSeconds": 60, "androidPriority": "normal"}}}"#)
                .bytes)
        #expect(clickAction(configuration) == .string("OPEN_CONVERSATION"))
    }

    @Test func moreThanFourCollapseKeysAreRefused() throws {
        let extra = (1...4).map {
            #", "t\#($0)": {"pushType": "background", "apnsPriority": 5, "ttlSeconds": 60, "androidPriority": "normal", "collapseKey": "k\#($0)"}"#
        }.joined()
        let badge =
            #"{"pushType": "background", "apnsPriority": 5, "ttlSeconds": 60, "androidPriority": "normal", "collapseKey": "badge"}"#
        let message = try #require(refusal(policies(badge, extra: extra)))
        #expect(message.contains("5 collapse keys"))
        #expect(message.contains("at most 4"))
    }

    @Test func aMissingTypeOrBadJSONIsRefused() throws {
        #expect(
            try #require(refusal(#"{"policies": {"# + Self.goodMessage + "}}")).contains("policies.mention: missing"))
        #expect(try #require(refusal("{")).contains("invalid JSON"))
    }

    @Test func aBadCategoriesFileIsRefused() throws {
        let noMessage = #"{"categories": [{"identifier": "other", "actions": []}]}"#
        #expect(throws: ConfigurationError.self) { try NotificationCategories(json: noMessage.bytes) }
        let badOption =
            #"{"categories": [{"identifier": "message", "actions": [{"identifier": "mute", "title": "Mute", "options": ["loud"]}]}]}"#
        let error = #expect(throws: ConfigurationError.self) { try NotificationCategories(json: badOption.bytes) }
        #expect(error?.description.contains("categories[0].actions[0].options[0]") == true)
    }
}
