import Foundation
import NIOCore
import NIOHPACK
import NotifyCore

/// The `apns` kind: HTTP/2 to APNs (`POST /3/device/<token>`) with provider-token auth, the
/// headers and payload taken from the command's `apns` rendering. Requests are multiplexed as
/// concurrent streams over a few TLS connections (``HTTPTransportConfiguration/connections``).
///
/// Apple's answers: 200 delivered; 410 `Unregistered` and 400 `BadDeviceToken` /
/// `DeviceTokenNotForTopic` make the token invalid; 403 `ExpiredProviderToken` renews the
/// provider token and tries once more at once; 429 and 5xx are retried with backoff (honouring
/// `Retry-After`); any other 4xx is rejected for good.
///
/// Every request carries an `apns-collapse-id`: the rendering's own when it has one, else
/// ``ReplacementKey/forCommand(_:)``, so a command sent again after a crash replaces its first
/// copy on the device.
public final class APNsSink: NotificationSink {
    public let kind = "apns"
    /// APNs refuses payloads over 4 KiB (rule 14).
    public static let maximumPayloadBytes = 4096

    private let providerToken: APNsProviderToken
    private let client: HTTP2Client

    /// - Parameter endpoint: `https://api.push.apple.com`, `https://api.sandbox.push.apple.com`, or a stand-in.
    public init(endpoint: String, providerToken: APNsProviderToken, transport: HTTPTransportConfiguration) throws {
        guard let url = URL(string: endpoint), url.scheme == "https", let host = url.host,
            url.path.isEmpty || url.path == "/"
        else {
            throw SinkConfigurationError("the APNs endpoint must be https://HOST[:PORT], not \(endpoint)")
        }
        self.providerToken = providerToken
        client = try HTTP2Client(host: host, port: url.port ?? 443, configuration: transport)
    }

    public func accepts(_ command: NotificationCommand) -> Bool {
        command.path == .push && command.recipient.provider == .apns
    }

    public func deliver(_ delivery: Delivery) async -> DeliveryResult {
        guard var rendering = delivery.command.apns else { return .rejected(reason: "MissingAPNsRendering") }
        let payload = CoreJSON.encode(rendering.payload)
        guard payload.count <= Self.maximumPayloadBytes else { return .rejected(reason: "PayloadTooLarge") }
        guard !rendering.token.isEmpty, rendering.token.utf8.allSatisfy(isHexDigit) else {
            return .tokenInvalid(reason: "BadDeviceToken", token: rendering.token)
        }
        if rendering.headers["apns-collapse-id"] == nil {
            rendering.headers["apns-collapse-id"] = ReplacementKey.forCommand(delivery.command.id)
        }
        let first = await send(rendering, payload: payload)
        guard case .expiredProviderToken(let rejected) = first else { return first.result }
        providerToken.invalidate(authorization: rejected)
        let second = await send(rendering, payload: payload)
        if case .expiredProviderToken = second {
            return .retryable(reason: "ExpiredProviderToken")
        }
        return second.result
    }

    public func shutdown() async {
        await client.shutdown()
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
        let authorization: String
        do {
            authorization = try providerToken.authorization()
        } catch {
            return .result(.retryable(reason: "ProviderTokenSigning"))
        }
        var headers = HPACKHeaders()
        headers.reserveCapacity(2 + rendering.headers.count)
        headers.add(name: "authorization", value: authorization)
        headers.add(name: "content-type", value: "application/json")
        for (name, value) in rendering.headers {
            // HTTP/2 field names are lowercase; the renderer already writes them so.
            headers.add(
                name: name.utf8.contains(where: { (65...90).contains($0) }) ? name.lowercased() : name, value: value)
        }
        let request = HTTP2Request(
            method: "POST", path: "/3/device/" + rendering.token, headers: headers, body: ByteBuffer(bytes: payload))
        let response: HTTP2Response
        do {
            response = try await client.send(request)
        } catch {
            return .result(.retryable(reason: "transport: \(error)"))
        }
        let status = response.status
        if status == 200 { return .result(.delivered) }
        let reason = (try? CoreJSON.parse(response.body.readableBytesView))?["reason"]?.stringValue ?? "HTTP \(status)"
        switch (status, reason) {
        case (403, "ExpiredProviderToken"):
            return .expiredProviderToken(authorization)
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            return .result(.tokenInvalid(reason: reason, token: rendering.token))
        case (429, _), (500..., _):
            return .result(
                .retryable(
                    reason: reason,
                    retryAfter: response.headers.first(name: "retry-after").flatMap {
                        RetryAfter.parse($0.trimmingCharacters(in: .whitespaces))
                    }))
        default:
            return .result(.rejected(reason: reason))
        }
    }
}

/// Whether `byte` is an ASCII hex digit (device tokens are hex).
private func isHexDigit(_ byte: UInt8) -> Bool {
    (48...57).contains(byte) || (97...102).contains(byte | 0x20)
}
