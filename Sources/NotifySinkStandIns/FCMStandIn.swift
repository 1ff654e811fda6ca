import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NotifySinks
import Synchronization
import _CryptoExtras

/// A loopback stand-in for FCM HTTP v1 and Google's OAuth2 token endpoint.
///
/// `POST /token` checks the RS256 assertion against the service account's public key (`iss`,
/// `aud`, `scope`, `exp`) and hands out an access token; `POST /v1/projects/<id>/messages:send`
/// checks the bearer access token and the message, and answers scripted errors per device token
/// (`UNREGISTERED`, `QUOTA_EXCEEDED` with Retry-After, `UNAVAILABLE`, `INVALID_ARGUMENT`, ...).
public final class FCMStandIn: Sendable {
    /// One accepted message.
    public struct Message: Sendable {
        public var token: String
        public var body: [UInt8]
    }

    /// What it accepted, and the answers it is told to give (keyed by device token).
    public let ledger: StandInLedger<Message>
    public let projectId: String
    public let clientEmail: String
    private let publicKey: _RSA.Signing.PublicKey
    private let issuedTokens = Mutex<Set<String>>([])
    /// Every access token handed out, revoked or not.
    private let handedOut = Mutex<[String]>([])
    private let exchanges = Mutex(0)
    /// The bound port, for checking the assertion's `aud` (the token URI contains it).
    private let boundPort = Mutex(0)

    /// - Parameter publicKey: the public half of the service account's key.
    public init(projectId: String, clientEmail: String, publicKey: _RSA.Signing.PublicKey) {
        self.projectId = projectId
        self.clientEmail = clientEmail
        self.publicKey = publicKey
        ledger = StandInLedger()
    }

    /// How many assertions were exchanged for access tokens.
    public var tokenExchanges: Int { exchanges.withLock { $0 } }

    /// Every access token it handed out so far, revoked or not.
    public var accessTokens: [String] { handedOut.withLock { $0 } }

    /// Revokes every access token handed out so far (the next send gets 401).
    public func revokeAccessTokens() {
        issuedTokens.withLock { $0.removeAll() }
    }

    /// A service-account JSON for `privateKeyPEM` whose `token_uri` is this stand-in's.
    public func serviceAccountJSON(privateKeyPEM: String, port: Int) throws -> [UInt8] {
        let object: [String: String] = [
            "type": "service_account", "project_id": projectId, "private_key_id": "test-key-1",
            "private_key": privateKeyPEM, "client_email": clientEmail, "token_uri": Self.tokenURI(port: port),
        ]
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    static func tokenURI(port: Int) -> String { "https://127.0.0.1:\(port)/token" }

    /// Serves on 127.0.0.1 (a free port) while `body` runs.
    public func serve<Value: Sendable>(
        tls authority: TestCertificateAuthority, logger: Logger, body: (Int) async throws -> Value
    ) async throws -> Value {
        let router = Router()
        router.post("/token") { request, _ in
            try await self.exchange(request, tokenURI: Self.tokenURI(port: self.boundPort.withLock { $0 }))
        }
        router.post("/v1/projects/:project/:method") { request, context in
            guard context.parameters.get("project") == self.projectId,
                context.parameters.get("method") == "messages:send"
            else {
                return fcmError(status: 404, status: "NOT_FOUND", code: nil)
            }
            return try await self.send(request)
        }
        return try await serveOverTLS(
            router, authority: authority, logger: logger,
            bound: { port in
                self.boundPort.withLock { $0 = port }
            }, body: body)
    }

    private func exchange(_ request: Request, tokenURI: String) async throws -> Response {
        let body = String(buffer: try await request.body.collect(upTo: 64 * 1024))
        var form: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer",
            let assertion = form["assertion"],
            let parts = try? JSONWebToken.parse(assertion),
            parts.header["alg"] == .string("RS256"),
            parts.claims["iss"] == .string(clientEmail),
            parts.claims["aud"] == .string(tokenURI),
            parts.claims["scope"]?.stringValue?.contains("https://www.googleapis.com/auth/firebase.messaging") == true,
            case .number(let expiry)? = parts.claims["exp"], expiry > Date().timeIntervalSince1970,
            publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: parts.signature), for: Array(parts.signingInput.utf8),
                padding: .insecurePKCS1v1_5
            )
        else {
            return jsonResponse(status: 400, ["error": "invalid_grant"])
        }
        let token = "ya29.\(UUID().uuidString)"
        issuedTokens.withLock { _ = $0.insert(token) }
        handedOut.withLock { $0.append(token) }
        exchanges.withLock { $0 += 1 }
        return jsonResponse(status: 200, ["access_token": token, "expires_in": 3599, "token_type": "Bearer"])
    }

    private func send(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer "),
            issuedTokens.withLock({ $0.contains(String(authorization.dropFirst("Bearer ".count))) })
        else {
            return fcmError(status: 401, status: "UNAUTHENTICATED", code: nil)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any],
            let message = object["message"] as? [String: Any],
            let token = message["token"] as? String, !token.isEmpty
        else {
            return fcmError(status: 400, status: "INVALID_ARGUMENT", code: "INVALID_ARGUMENT")
        }
        if let data = message["data"] as? [String: Any], data.values.contains(where: { !($0 is String) }) {
            return fcmError(status: 400, status: "INVALID_ARGUMENT", code: "INVALID_ARGUMENT")
        }
        if let refusal = try await play(
            ledger.nextAnswer(for: token), unavailableReason: "UNAVAILABLE",
            refusal: { status, reason, retryAfter in
                fcmError(
                    status: status, status: Self.grpcStatus(forHTTP: status), code: reason,
                    headers: retryAfterHeader(retryAfter))
            }, accept: { ledger.accept(Message(token: token, body: Array(buffer: body))) })
        {
            return refusal
        }
        return jsonResponse(status: 200, ["name": "projects/\(projectId)/messages/\(UUID().uuidString)"])
    }

    private static func grpcStatus(forHTTP status: Int) -> String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 429: "RESOURCE_EXHAUSTED"
        case 503: "UNAVAILABLE"
        default: "INTERNAL"
        }
    }
}

/// An FCM v1 error body: `{"error": {"code", "status", "details": [{"@type": FcmError, "errorCode"}]}}`.
private func fcmError(status: Int, status grpcStatus: String, code: String?, headers: HTTPFields = [:]) -> Response {
    var error: [String: Any] = ["code": status, "message": code ?? grpcStatus, "status": grpcStatus]
    if let code {
        error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code]]
    }
    return jsonResponse(status: status, ["error": error], headers: headers)
}
