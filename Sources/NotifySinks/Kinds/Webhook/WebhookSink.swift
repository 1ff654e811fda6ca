import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NotifyCore

/// The `webhook` kind: POSTs each command's JSON to a URL, signed, so a team can write a sink in
/// any language. 2xx is delivered; 429 and 5xx are retried with backoff honouring `Retry-After`;
/// other answers are rejected for good.
///
/// Signed per the Standard Webhooks specification (``StandardWebhookSignature``): `webhook-id` (the
/// command id, the same on every attempt), `webhook-timestamp` (Unix seconds of the attempt) and
/// `webhook-signature` (one `v1,…` per secret, space-separated, so a receiver can verify with either
/// secret while one rotates). With `legacySignature`, also the deprecated `X-Notify-Timestamp`,
/// `X-Notify-Signature` (``LegacyWebhookSignature``, with the first secret) and `X-Notify-Command-Id`.
public final class WebhookSink: NotificationSink {
    public let kind = "webhook"

    private let url: String
    private let secrets: [WebhookSecret]
    private let legacySignature: Bool
    private let selection: CommandSelection
    private let pool: HTTPClientPool

    /// - Parameters:
    ///   - url: where commands are POSTed (https, or http for a receiver on the same host).
    ///   - secrets: the HMAC secrets, each of which signs every request; at least one.
    ///   - legacySignature: also send the deprecated `X-Notify-*` headers.
    ///   - selection: the commands to pass on.
    public init(
        url: String, secrets: [WebhookSecret], legacySignature: Bool = false, selection: CommandSelection = .all,
        transport: HTTPTransportConfiguration
    ) throws {
        guard url.hasPrefix("https://") || url.hasPrefix("http://") else {
            throw SinkConfigurationError("webhook URL must be http(s): \(url)")
        }
        guard !secrets.isEmpty else { throw SinkConfigurationError("the webhook sink needs at least one secret") }
        self.url = url
        self.secrets = secrets
        self.legacySignature = legacySignature
        self.selection = selection
        pool = try HTTPClientPool(configuration: transport)
    }

    public func accepts(_ command: NotificationCommand) -> Bool {
        selection.matches(command)
    }

    public func deliver(_ delivery: Delivery) async -> DeliveryResult {
        let timestamp = String(Int(Date().timeIntervalSince1970))
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: StandardWebhookSignature.idHeader, value: delivery.command.id)
        request.headers.add(name: StandardWebhookSignature.timestampHeader, value: timestamp)
        request.headers.add(
            name: StandardWebhookSignature.signatureHeader,
            value: StandardWebhookSignature.sign(
                id: delivery.command.id, timestamp: timestamp, body: delivery.json, secrets: secrets))
        if legacySignature {
            request.headers.add(name: LegacyWebhookSignature.timestampHeader, value: timestamp)
            request.headers.add(
                name: LegacyWebhookSignature.signatureHeader,
                value: LegacyWebhookSignature.sign(secret: secrets[0].key, timestamp: timestamp, body: delivery.json))
            request.headers.add(name: LegacyWebhookSignature.commandIdHeader, value: delivery.command.id)
        }
        request.body = .bytes(ByteBuffer(bytes: delivery.json))
        let response: HTTPResponseSummary
        do {
            response = try await pool.execute(request)
        } catch {
            return .retryable(reason: "transport: \(error)")
        }
        let status = Int(response.status.code)
        switch status {
        case 200..<300: return .delivered
        case 429, 500...: return .retryable(reason: "HTTP \(status)", retryAfter: response.retryAfter)
        default: return .rejected(reason: "HTTP \(status)")
        }
    }

    public func shutdown() async {
        await pool.shutdown()
    }
}

/// A webhook signing secret: `whsec_` and base64 (as the Standard Webhooks libraries write them,
/// the key being the decoded bytes), or anything else, whose bytes are the key as they are. Its
/// `description` never shows the key.
public struct WebhookSecret: Sendable, CustomStringConvertible {
    /// The HMAC key.
    public let key: [UInt8]
    /// Where it came from, for messages.
    public let origin: String

    /// The prefix of a base64-encoded secret.
    public static let prefix = "whsec_"

    /// Reads `secret`'s bytes as a `whsec_` secret or a raw one.
    /// - Throws: ``SinkConfigurationError`` when it starts with `whsec_` but is not base64 after it.
    public init(_ secret: Secret) throws {
        origin = secret.origin
        let prefix = Array(Self.prefix.utf8)
        guard secret.bytes.starts(with: prefix) else {
            key = secret.bytes
            return
        }
        guard let key = Data(base64Encoded: Data(secret.bytes.dropFirst(prefix.count))), !key.isEmpty else {
            throw SinkConfigurationError(
                "the webhook secret from \(secret.origin) starts with \(Self.prefix) but is not base64 after it")
        }
        self.key = [UInt8](key)
    }

    public var description: String { "<webhook secret from \(origin)>" }

    /// The secrets of the webhook sink: the one in `file` (else in `environmentVariable`) if any,
    /// then those in `directory`, one per file, by file name. At least one.
    public static func load(file: String?, environmentVariable: String, directory: String?) throws -> [WebhookSecret] {
        var secrets: [Secret] = []
        if let secret = try Secret.loadIfGiven(
            file: file, environmentVariable: environmentVariable, trimmingTrailingNewline: true)
        {
            secrets.append(secret)
        }
        if let directory {
            secrets += try Secret.loadDirectory(directory).sorted { $0.key < $1.key }.map(\.value)
        }
        guard !secrets.isEmpty else {
            throw SinkConfigurationError(
                "no webhook secret: pass --secret-file (or set \(environmentVariable)) or --secrets-dir with at least one file"
            )
        }
        return try secrets.map(WebhookSecret.init)
    }
}

/// Webhook signatures per the Standard Webhooks specification (www.standardwebhooks.com): `v1,`
/// and the base64 HMAC-SHA256, keyed with a secret, of `<webhook-id>.<webhook-timestamp>.<body>`;
/// one per secret, space-separated.
public enum StandardWebhookSignature {
    /// The header names, lowercase.
    public static let idHeader = "webhook-id"
    public static let timestampHeader = "webhook-timestamp"
    public static let signatureHeader = "webhook-signature"

    /// The `webhook-signature` value: one `v1,<base64>` per secret, in their order.
    public static func sign(id: String, timestamp: String, body: [UInt8], secrets: [WebhookSecret]) -> String {
        let content = signedContent(id: id, timestamp: timestamp, body: body)
        return secrets.map { secret in
            "v1,"
                + Data(HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret.key)))
                .base64EncodedString()
        }.joined(separator: " ")
    }

    /// Whether one of the `v1` signatures of a `webhook-signature` value is right for `id`,
    /// `timestamp` and `body` with one of `keys` (compared in constant time). Other versions are skipped.
    public static func verify(_ signatures: String, id: String, timestamp: String, body: [UInt8], keys: [[UInt8]])
        -> Bool
    {
        let content = signedContent(id: id, timestamp: timestamp, body: body)
        let macs = signatures.split(separator: " ").compactMap { signature -> Data? in
            guard signature.hasPrefix("v1,") else { return nil }
            return Data(base64Encoded: String(signature.dropFirst(3)))
        }
        return macs.contains { mac in
            keys.contains {
                HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: content, using: SymmetricKey(data: $0))
            }
        }
    }

    private static func signedContent(id: String, timestamp: String, body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + [UInt8(ascii: ".")] + Array(timestamp.utf8) + [UInt8(ascii: ".")] + body
    }
}

/// The signature notify sent before it followed the Standard Webhooks specification, sent only with
/// the setting `sink.webhook.legacySignature` (deprecated, for one release): `sha256=` and the
/// lowercase hex HMAC-SHA256, keyed with the first secret, of `<timestamp>.<body>`.
public enum LegacyWebhookSignature {
    /// The header names, lowercase.
    public static let signatureHeader = "x-notify-signature"
    public static let timestampHeader = "x-notify-timestamp"
    public static let commandIdHeader = "x-notify-command-id"

    public static func sign(secret: [UInt8], timestamp: String, body: [UInt8]) -> String {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret))
        hmac.update(data: Array(timestamp.utf8))
        hmac.update(data: [UInt8(ascii: ".")])
        hmac.update(data: body)
        return "sha256=" + hmac.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

/// Which commands a general-purpose kind (webhook, jsonl) takes: by path and provider.
public struct CommandSelection: Sendable, Hashable {
    public var paths: Set<DeliveryPath>
    public var providers: Set<PushProvider>

    public init(paths: Set<DeliveryPath> = [.push, .local], providers: Set<PushProvider> = [.apns, .fcm]) {
        self.paths = paths
        self.providers = providers
    }

    /// Every command.
    public static let all = CommandSelection()

    public func matches(_ command: NotificationCommand) -> Bool {
        paths.contains(command.path) && providers.contains(command.recipient.provider)
    }
}
