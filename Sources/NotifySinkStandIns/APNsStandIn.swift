import Crypto
import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NotifySinks
import Synchronization

/// A loopback stand-in for APNs: HTTP/2 over TLS, `POST /3/device/<token>`, checking what Apple
/// checks: the provider token's ES256 signature against the key's public half, its `kid`, `iss`
/// and age; `apns-topic`, `apns-push-type`, `apns-priority`, `apns-id`; the payload's size and
/// JSON. Answers scripted per device token (410, 429 with Retry-After, 500, slow) come first.
public final class APNsStandIn: Sendable {
    /// One accepted notification.
    public struct Notification: Sendable {
        public var token: String
        public var headers: [String: String]
        public var payload: [UInt8]
    }

    /// What it accepted, and the answers it is told to give (keyed by device token).
    public let ledger: StandInLedger<Notification>
    /// The key's public half, raw (swift-crypto's key type is not `Sendable`).
    private let publicKey: Data
    private let keyId: String
    private let teamId: String
    /// Provider tokens already verified (APNs providers reuse one token for up to an hour).
    private let verifiedTokens = Mutex<Set<String>>([])
    /// Provider tokens to answer `ExpiredProviderToken` for, as if they had aged.
    private let expiredTokens = Mutex<Set<String>>([])

    /// - Parameters:
    ///   - publicKey: the public half of the provider's `.p8` key.
    ///   - keepsRequests: `false` only counts accepted notifications (benchmarks).
    public init(publicKey: P256.Signing.PublicKey, keyId: String, teamId: String, keepsRequests: Bool = true) {
        self.publicKey = publicKey.rawRepresentation
        self.keyId = keyId
        self.teamId = teamId
        ledger = StandInLedger(keepsRequests: keepsRequests)
    }

    /// From now on, `token` (a provider token) is answered `403 ExpiredProviderToken`.
    public func expire(providerToken token: String) {
        expiredTokens.withLock { _ = $0.insert(token) }
    }

    /// The provider tokens seen so far that verified.
    public var providerTokens: Set<String> { verifiedTokens.withLock { $0 } }

    /// Serves on 127.0.0.1 (a free port) while `body` runs.
    public func serve<Value: Sendable>(
        tls authority: TestCertificateAuthority, logger: Logger, body: (Int) async throws -> Value
    ) async throws -> Value {
        let router = Router()
        router.post("/3/device/:token") { request, context in
            try await self.answer(request, token: context.parameters.get("token") ?? "")
        }
        return try await serveOverTLS(router, authority: authority, logger: logger, body: body)
    }

    private func answer(_ request: Request, token: String) async throws -> Response {
        let payload = try await request.body.collect(upTo: 64 * 1024)
        if let refusal = checkAuthorization(request.headers[.authorization]) {
            return jsonResponse(status: 403, ["reason": refusal])
        }
        if let refusal = checkHeaders(request.headers) {
            return jsonResponse(status: 400, ["reason": refusal])
        }
        guard payload.readableBytes <= APNsSink.maximumPayloadBytes else {
            return jsonResponse(status: 413, ["reason": "PayloadTooLarge"])
        }
        guard (try? JSONSerialization.jsonObject(with: Data(buffer: payload))) is [String: Any] else {
            return jsonResponse(status: 400, ["reason": "BadPayload"])
        }
        if let refusal = try await play(ledger.nextAnswer(for: token), unavailableReason: "ServiceUnavailable", refusal: { status, reason, retryAfter in
            jsonResponse(status: status, ["reason": reason], headers: retryAfterHeader(retryAfter))
        }) {
            return refusal
        }
        var headers: [String: String] = [:]
        if ledger.keepsRequests {
            for field in request.headers where field.name.canonicalName.hasPrefix("apns-") {
                headers[field.name.canonicalName] = field.value
            }
        }
        ledger.accept(Notification(token: token, headers: headers, payload: Array(buffer: payload)))
        return Response(status: .ok)
    }

    /// `nil` if the provider token is good, else Apple's reason.
    private func checkAuthorization(_ authorization: String?) -> String? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return "MissingProviderToken" }
        let token = String(authorization.dropFirst("bearer ".count))
        if expiredTokens.withLock({ $0.contains(token) }) { return "ExpiredProviderToken" }
        if verifiedTokens.withLock({ $0.contains(token) }) { return nil }
        guard let parts = try? JSONWebToken.parse(token),
              parts.header["alg"] == .string("ES256"),
              parts.header["kid"] == .string(keyId),
              parts.claims["iss"] == .string(teamId),
              case .number(let issuedAt)? = parts.claims["iat"],
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parts.signature),
              let key = try? P256.Signing.PublicKey(rawRepresentation: publicKey),
              key.isValidSignature(signature, for: Array(parts.signingInput.utf8))
        else { return "InvalidProviderToken" }
        guard abs(Date().timeIntervalSince1970 - issuedAt) < 3600 else { return "ExpiredProviderToken" }
        verifiedTokens.withLock { _ = $0.insert(token) }
        return nil
    }

    /// `nil` if the request headers are acceptable, else Apple's reason.
    private func checkHeaders(_ headers: HTTPFields) -> String? {
        func header(_ name: String) -> String? { field(name, in: headers) }
        guard let topic = header("apns-topic"), !topic.isEmpty else { return "MissingTopic" }
        if let type = header("apns-push-type"),
           !["alert", "background", "voip", "complication", "fileprovider", "mdm", "liveactivity", "location", "pushtotalk"].contains(type) {
            return "InvalidPushType"
        }
        if let priority = header("apns-priority"), !["1", "5", "10"].contains(priority) { return "BadPriority" }
        if header("apns-push-type") == "background", header("apns-priority") == "10" { return "BadPriority" }
        if let id = header("apns-id"), UUID(uuidString: id) == nil { return "BadMessageId" }
        if let collapse = header("apns-collapse-id"), collapse.utf8.count > 64 { return "BadCollapseId" }
        return nil
    }
}
