import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NotifyCore

/// The `webhook` kind: POSTs each command's JSON to a URL, signed, so a team can write a sink in
/// any language. 2xx is delivered; 429 and 5xx are retried with backoff honouring `Retry-After`;
/// other answers are rejected for good.
///
/// Headers: `X-Notify-Timestamp` (Unix seconds), `X-Notify-Signature`
/// (``WebhookSignature``), `X-Notify-Command-Id` (for receivers that deduplicate).
public final class WebhookSink: NotificationSink {
    public let kind = "webhook"

    private let url: String
    private let secret: Secret
    private let selection: CommandSelection
    private let pool: HTTPClientPool

    /// - Parameters:
    ///   - url: where commands are POSTed (https, or http for a receiver on the same host).
    ///   - secret: the shared HMAC secret.
    ///   - selection: the commands to pass on.
    public init(url: String, secret: Secret, selection: CommandSelection = .all, transport: HTTPTransportConfiguration) throws {
        guard url.hasPrefix("https://") || url.hasPrefix("http://") else {
            throw SinkConfigurationError("webhook URL must be http(s): \(url)")
        }
        self.url = url
        self.secret = secret
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
        request.headers.add(name: WebhookSignature.timestampHeader, value: timestamp)
        request.headers.add(
            name: WebhookSignature.signatureHeader,
            value: WebhookSignature.sign(secret: secret.bytes, timestamp: timestamp, body: delivery.json)
        )
        request.headers.add(name: "x-notify-command-id", value: delivery.command.id)
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

/// The webhook signature: `sha256=` and the lowercase hex HMAC-SHA256, keyed with the shared
/// secret, of `<timestamp>.<body>`. Receivers recompute it and reject stale timestamps.
public enum WebhookSignature {
    /// The header names, lowercase.
    public static let signatureHeader = "x-notify-signature"
    public static let timestampHeader = "x-notify-timestamp"

    public static func sign(secret: [UInt8], timestamp: String, body: [UInt8]) -> String {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret))
        hmac.update(data: Array(timestamp.utf8))
        hmac.update(data: [UInt8(ascii: ".")])
        hmac.update(data: body)
        return "sha256=" + hmac.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `signature` is right for `timestamp` and `body` (compared in constant time).
    public static func verify(_ signature: String, secret: [UInt8], timestamp: String, body: [UInt8]) -> Bool {
        guard signature.hasPrefix("sha256="), let mac = hexBytes(signature.dropFirst(7)) else { return false }
        var input = Array(timestamp.utf8)
        input.append(UInt8(ascii: "."))
        input.append(contentsOf: body)
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: input, using: SymmetricKey(data: secret))
    }

    private static func hexBytes(_ hex: Substring) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
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
