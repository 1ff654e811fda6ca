import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyCore

/// The `fcm` kind: FCM HTTP v1, `POST /v1/projects/{project_id}/messages:send` with the command's
/// `fcm` body and an OAuth2 access token from a service account.
///
/// FCM's answers: `UNREGISTERED` makes the token invalid; `QUOTA_EXCEEDED`, `UNAVAILABLE`,
/// `INTERNAL` (and other 5xx) are retried with backoff honouring `Retry-After`; a 401 renews the
/// access token and tries once more; `INVALID_ARGUMENT`, `SENDER_ID_MISMATCH` and other 4xx are
/// rejected for good.
///
/// A message that shows a notification carries a replacement key, so a command sent again after
/// a crash replaces its first copy on the device: Android's `android.notification.tag` and, for
/// iOS through FCM, `apns.headers.apns-collapse-id`, each the rendering's own when it has one
/// (the renderer tags Android notifications by conversation), else
/// ``ReplacementKey/forCommand(_:)``.
public final class FCMSink: NotificationSink {
    public let kind = "fcm"

    private let sendURL: String
    private let pool: HTTPClientPool
    private let accessTokens: GoogleAccessTokenSource

    /// - Parameter endpoint: `https://fcm.googleapis.com` or a stand-in.
    public init(endpoint: String, account: ServiceAccount, transport: HTTPTransportConfiguration) throws {
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        sendURL = "\(base)/v1/projects/\(account.projectId)/messages:send"
        pool = try HTTPClientPool(configuration: transport)
        accessTokens = GoogleAccessTokenSource(account: account, pool: pool)
    }

    public func accepts(_ command: NotificationCommand) -> Bool {
        command.path == .push && command.recipient.provider == .fcm
    }

    public func deliver(_ delivery: Delivery) async -> DeliveryResult {
        guard let rendering = delivery.command.fcm else { return .rejected(reason: "MissingFCMRendering") }
        let message = Self.withReplacementKeys(rendering.message, key: ReplacementKey.forCommand(delivery.command.id))
        let body = CoreJSON.encode(.object(["message": message]))
        let token = rendering.message["token"]?.stringValue ?? ""
        let first = await send(body, token: token)
        guard case .unauthenticated(let rejected) = first else { return first.result }
        if let rejected { accessTokens.invalidate(rejected) }
        return await send(body, token: token).result
    }

    public func shutdown() async {
        await pool.shutdown()
    }

    private enum Answer {
        case result(DeliveryResult)
        case unauthenticated(String?)

        var result: DeliveryResult {
            switch self {
            case .result(let result): return result
            case .unauthenticated: return .retryable(reason: "UNAUTHENTICATED")
            }
        }
    }

    private func send(_ body: [UInt8], token: String) async -> Answer {
        let accessToken: String
        do {
            accessToken = try await accessTokens.accessToken()
        } catch {
            return .result(.retryable(reason: "oauth2: \(error)"))
        }
        var request = HTTPClientRequest(url: sendURL)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(accessToken)")
        request.headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        request.body = .bytes(ByteBuffer(bytes: body))
        let response: HTTPResponseSummary
        do {
            response = try await pool.execute(request)
        } catch {
            return .result(.retryable(reason: "transport: \(error)"))
        }
        let status = Int(response.status.code)
        if (200..<300).contains(status) { return .result(.delivered) }
        if status == 401 { return .unauthenticated(accessToken) }
        let reason = Self.errorCode(in: response) ?? "HTTP \(status)"
        switch reason {
        case "UNREGISTERED":
            return .result(.tokenInvalid(reason: reason, token: token))
        case "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL":
            return .result(.retryable(reason: reason, retryAfter: response.retryAfter))
        case "INVALID_ARGUMENT", "SENDER_ID_MISMATCH":
            return .result(.rejected(reason: reason))
        default:
            if status == 429 || status >= 500 {
                return .result(.retryable(reason: reason, retryAfter: response.retryAfter))
            }
            return .result(.rejected(reason: reason))
        }
    }

    /// `message` with `key` as `android.notification.tag` and `apns.headers.apns-collapse-id` where
    /// the message has that block and no key of its own.
    static func withReplacementKeys(_ message: JSONValue, key: String) -> JSONValue {
        guard case .object(var members) = message else { return message }
        if case .object(var android)? = members["android"], case .object(var notification)? = android["notification"],
            notification["tag"] == nil
        {
            notification["tag"] = .string(key)
            android["notification"] = .object(notification)
            members["android"] = .object(android)
        }
        if case .object(var apns)? = members["apns"] {
            var headers: [String: JSONValue] = [:]
            if case .object(let existing)? = apns["headers"] { headers = existing }
            if headers["apns-collapse-id"] == nil {
                headers["apns-collapse-id"] = .string(key)
                apns["headers"] = .object(headers)
                members["apns"] = .object(apns)
            }
        }
        return .object(members)
    }

    /// FCM's error code: `error.details[].errorCode` of the `FcmError` detail, else `error.status`.
    static func errorCode(in response: HTTPResponseSummary) -> String? {
        guard let error = response.jsonObject?["error"] as? [String: Any] else { return nil }
        if let details = error["details"] as? [[String: Any]] {
            for detail in details {
                if let code = detail["errorCode"] as? String { return code }
            }
        }
        return error["status"] as? String
    }
}
