import Crypto
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifySinkStandIns
import NotifySinks

/// A logger for tests: warnings and worse only.
let testLogger: Logger = {
    var logger = Logger(label: "notify.sinks.tests")
    logger.logLevel = .warning
    return logger
}()

/// Runs `body` with a fresh throwaway CA, and deletes its files after.
func withCertificateAuthority<T>(_ body: (TestCertificateAuthority) async throws -> T) async throws -> T {
    let authority = try await TestCertificateAuthority.make()
    defer { authority.remove() }
    return try await body(authority)
}

/// A command as the route stage would write it, for `provider` / `path`, expiring in `expiresIn`.
func makeCommand(
    id: String, userId: String = "u1", deviceId: String = "d1", provider: PushProvider = .apns,
    path: DeliveryPath = .push,
    token: String = "a1b2c3d4", expiresIn: TimeInterval = 3600, at: Date = Date()
) -> NotificationCommand {
    let content: JSONValue = .object([
        "title": .string("Ana"), "body": .string("hello \(id)"), "threadId": .string("c1"),
        "category": .string("message"),
    ])
    var command = NotificationCommand(
        id: id, at: at.formatted(.iso8601), path: path,
        recipient: Recipient(
            userId: userId, deviceId: deviceId, platform: provider == .apns ? .ios : .android, provider: provider),
        conversationId: "c1", messageId: "m-\(id)",
        expiresAt: Date().addingTimeInterval(expiresIn).formatted(.iso8601), content: content
    )
    switch (path, provider) {
    case (.local, _):
        command.local = .object(["content": content])
    case (.push, .apns):
        command.apns = APNsRendering(
            token: token,
            headers: [
                "apns-push-type": "alert", "apns-priority": "10", "apns-topic": "com.example.chat",
                "apns-id": UUID().uuidString.lowercased(),
            ],
            payload: .object([
                "aps": .object([
                    "alert": .object(["title": .string("Ana"), "body": .string("hello \(id)")]),
                    "thread-id": .string("c1"),
                ]),
                "talkroom-id": .string("c1"),
            ])
        )
    case (.push, .fcm):
        command.fcm = FCMRendering(
            message: .object([
                "token": .string(token),
                "notification": .object(["title": .string("Ana"), "body": .string("hello \(id)")]),
                "data": .object(["talkroom-id": .string("c1")]),
            ]))
    }
    return command
}

/// The command's JSON, as it sits on notify.commands.
func json(_ command: NotificationCommand) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return Array(try! encoder.encode(command))
}

/// A delivery of `command`'s first attempt.
func delivery(_ command: NotificationCommand) -> Delivery {
    Delivery(command: command, json: json(command))
}

/// A file in a fresh temporary directory (the directory is not removed: callers remove the file).
func temporaryFile(_ name: String, contents: [UInt8]? = nil) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notify-sinks-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent(name).path
    if let contents, !FileManager.default.createFile(atPath: path, contents: Data(contents)) {
        throw SinkConfigurationError("cannot create \(path)")
    }
    return path
}

/// An APNs signing key and the stand-in that knows its public half.
struct APNsFixture {
    let key = P256.Signing.PrivateKey()
    let keyId = "KEY1234567"
    let teamId = "TEAM123456"

    var p8: Secret { Secret(bytes: Array(key.pemRepresentation.utf8), origin: "test") }

    func standIn(keepsRequests: Bool = true) -> APNsStandIn {
        APNsStandIn(publicKey: key.publicKey, keyId: keyId, teamId: teamId, keepsRequests: keepsRequests)
    }

    func sink(port: Int, authority: TestCertificateAuthority, requestTimeout: Duration = .seconds(5)) throws -> APNsSink
    {
        try APNsSink(
            endpoint: "https://127.0.0.1:\(port)",
            providerToken: try APNsProviderToken(p8: p8, keyId: keyId, teamId: teamId),
            transport: HTTPTransportConfiguration(caFile: authority.caFile, requestTimeout: requestTimeout)
        )
    }
}

/// Runs `body` with a sink, and shuts the sink down after, also on failure.
func using<S: NotificationSink, T>(_ sink: S, _ body: (S) async throws -> T) async throws -> T {
    do {
        let result = try await body(sink)
        await sink.shutdown()
        return result
    } catch {
        await sink.shutdown()
        throw error
    }
}
