import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyCore

/// The `apns` kind: HTTP/2 to APNs (`POST /3/device/<token>`) with provider-token auth, the
/// headers and payload taken from the command's `apns` rendering.
///
/// Apple's answers: 200 delivered; 410 `Unregistered` and 400 `BadDeviceToken` /
/// `DeviceTokenNotForTopic` make the token invalid; 403 `ExpiredProviderToken` renews the
/// provider token and tries once more at once; 429 and 5xx are retried with backoff (honouring
/// `Retry-After`); any other 4xx is rejected for good.
public final class APNsSink: NotificationSink {
    public let kind = "apns"
    /// APNs refuses payloads over 4 KiB (rule 14).
    public static let maximumPayloadBytes = 4096

    private let endpoint: String
    private let providerToken: APNsProviderToken
    private let pool: HTTPClientPool

    /// - Parameter endpoint: `https://api.push.apple.com`, `https://api.sandbox.push.apple.com`, or a stand-in.
    public init(endpoint: String, providerToken: APNsProviderToken, transport: HTTPTransportConfiguration) throws {
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.providerToken = providerToken
        pool = try HTTPClientPool(configuration: transport)
    }

    public func accepts(_ command: NotificationCommand) -> Bool {
        command.path == .push && command.recipient.provider == .apns
    }

    public func deliver(_ delivery: Delivery) async -> DeliveryResult {
        guard let rendering = delivery.command.apns else { return .rejected(reason: "MissingAPNsRendering") }
        let payload = CoreJSON.encode(rendering.payload)
        guard payload.count <= Self.maximumPayloadBytes else { return .rejected(reason: "PayloadTooLarge") }
        guard !rendering.token.isEmpty, rendering.token.allSatisfy(\.isHexDigit) else {
            return .tokenInvalid(reason: "BadDeviceToken", token: rendering.token)
        }
        let first = await send(rendering, payload: payload)
        guard case .expiredProviderToken(let rejected) = first else { return first.result }
        providerToken.invalidate(rejected)
        let second = await send(rendering, payload: payload)
        if case .expiredProviderToken = second {
            return .retryable(reason: "ExpiredProviderToken")
        }
        return second.result
    }

    public func shutdown() async {
        await pool.shutdown()
    }

    private enum Answer {
        case result(DeliveryResult)
        case expiredProviderToken(String)

        var result: DeliveryResult {
            switch self {
            case .result(let result): return result
            case .expiredProviderToken: return .retryable(reason: "ExpiredProviderToken")
            }
        }
    }

    private func send(_ rendering: APNsRendering, payload: [UInt8]) async -> Answer {
        let bearer: String
        do {
            bearer = try providerToken.token()
        } catch {
            return .result(.retryable(reason: "ProviderTokenSigning"))
        }
        var request = HTTPClientRequest(url: "\(endpoint)/3/device/\(rendering.token)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(bearer)")
        request.headers.add(name: "content-type", value: "application/json")
        for (name, value) in rendering.headers.sorted(by: { $0.key < $1.key }) {
            request.headers.add(name: name.lowercased(), value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: payload))
        let response: HTTPResponseSummary
        do {
            response = try await pool.execute(request)
        } catch {
            return .result(.retryable(reason: "transport: \(error)"))
        }
        let status = response.status.code
        if status == 200 { return .result(.delivered) }
        let reason = response.jsonObject?["reason"] as? String ?? "HTTP \(status)"
        switch (status, reason) {
        case (403, "ExpiredProviderToken"):
            return .expiredProviderToken(bearer)
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            return .result(.tokenInvalid(reason: reason, token: rendering.token))
        case (429, _), (500..., _):
            return .result(.retryable(reason: reason, retryAfter: response.retryAfter))
        default:
            return .result(.rejected(reason: reason))
        }
    }
}
