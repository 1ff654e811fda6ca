import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import _CryptoExtras

/// A Google service account as its JSON key file has it.
public struct ServiceAccount: Sendable {
    /// `project_id`: the `{id}` of `/v1/projects/{id}/messages:send`.
    public var projectId: String
    /// `client_email`: the assertion's `iss`.
    public var clientEmail: String
    /// `private_key_id`: the assertion's `kid`, when given.
    public var privateKeyId: String?
    /// `token_uri`: where the assertion is exchanged (and its `aud`).
    public var tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// Reads the service-account JSON (`project_id`, `client_email`, `private_key`, `token_uri`, ...).
    public init(json secret: Secret) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(secret.bytes))) as? [String: Any] else {
            throw SinkConfigurationError("the service account from \(secret.origin) is not a JSON object")
        }
        func field(_ name: String) throws -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw SinkConfigurationError("the service account from \(secret.origin) has no \(name)")
            }
            return value
        }
        projectId = try field("project_id")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        privateKeyId = object["private_key_id"] as? String
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: try field("private_key"))
        } catch let error as SinkConfigurationError {
            throw error
        } catch {
            throw SinkConfigurationError(
                "the private_key of the service account from \(secret.origin) is not a PEM RSA key")
        }
    }
}

/// OAuth2 access tokens for FCM from a service account: an RS256 JWT assertion
/// (`iss` = client email, `scope` = firebase.messaging, `aud` = token_uri, one hour) exchanged at
/// the account's `token_uri`; the access token is cached until `refreshMargin` before it expires.
final class GoogleAccessTokenSource: Sendable {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    private let account: ServiceAccount
    private let pool: HTTPClientPool
    private let refreshMargin: Duration
    private let cached: Mutex<(token: String, expiresAt: Date)?> = Mutex(nil)
    private let exchange = SingleFlight<String>()

    init(account: ServiceAccount, pool: HTTPClientPool, refreshMargin: Duration = .seconds(300)) {
        self.account = account
        self.pool = pool
        self.refreshMargin = refreshMargin
    }

    /// A valid access token, from the cache or a fresh exchange (one at a time).
    func accessToken() async throws -> String {
        let now = Date()
        if let token = cached.withLock({ cached -> String? in
            guard let cached, cached.expiresAt.timeIntervalSince(now) > refreshMargin.seconds else { return nil }
            return cached.token
        }) {
            return token
        }
        return try await exchange.run { try await self.fetch() }
    }

    /// Forgets `token` after the service refused it.
    func invalidate(_ token: String) {
        cached.withLock { cached in
            if cached?.token == token { cached = nil }
        }
    }

    private func fetch() async throws -> String {
        let now = Date()
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        var header = ["typ": "JWT"]
        header["kid"] = account.privateKeyId
        let assertion = try JSONWebToken.rs256(
            header: header,
            claims: [
                "iss": .string(account.clientEmail), "scope": .string(Self.scope), "aud": .string(account.tokenURI),
                "iat": .number(issuedAt), "exp": .number(issuedAt + 3600),
            ],
            key: account.privateKey
        )
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await pool.execute(request)
        guard response.status.code == 200,
            let object = response.jsonObject,
            let token = object["access_token"] as? String
        else {
            throw AccessTokenError(status: Int(response.status.code))
        }
        let lifetime = (object["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        cached.withLock { $0 = (token, now.addingTimeInterval(lifetime)) }
        return token
    }
}

/// The token endpoint did not hand out an access token.
struct AccessTokenError: Error, CustomStringConvertible {
    var status: Int
    var description: String { "token endpoint answered HTTP \(status)" }
}

/// Runs one operation at a time; callers arriving while it runs share its result.
final class SingleFlight<Value: Sendable>: Sendable {
    private let waiting: Mutex<[CheckedContinuation<Value, any Error>]?> = Mutex(nil)

    func run(_ operation: @Sendable @escaping () async throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let leader = waiting.withLock { waiting -> Bool in
                if waiting == nil {
                    waiting = [continuation]
                    return true
                }
                waiting?.append(continuation)
                return false
            }
            guard leader else { return }
            Task {
                let result: Result<Value, any Error>
                do {
                    result = .success(try await operation())
                } catch {
                    result = .failure(error)
                }
                let continuations = waiting.withLock { waiting in
                    defer { waiting = nil }
                    return waiting ?? []
                }
                for continuation in continuations { continuation.resume(with: result) }
            }
        }
    }
}
