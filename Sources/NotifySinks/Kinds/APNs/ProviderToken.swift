import Crypto
import Foundation
import Synchronization

/// APNs token-based authentication: an ES256 JWT with `kid` (key id) in the header and `iss`
/// (team id) and `iat` in the claims. Apple refuses tokens renewed more often than every 20
/// minutes and older than an hour, so one token is reused for `lifetime` (50 minutes by default)
/// and renewed early only when APNs answers `ExpiredProviderToken`.
public final class APNsProviderToken: Sendable {
    /// The key's raw scalar (swift-crypto's key type is not `Sendable`; a token is signed only
    /// every `lifetime`, so rebuilding the key then costs nothing).
    private let keyBytes: Data
    private let keyId: String
    private let teamId: String
    private let lifetime: Duration
    private let current: Mutex<Issued?> = Mutex(nil)

    /// A token in use: the JWT, its `authorization` header value, and when it was signed.
    private struct Issued {
        var token: String
        var authorization: String
        var issuedAt: Date
    }

    /// - Parameters:
    ///   - p8: the `.p8` key file's text (PKCS#8 PEM of a P-256 key).
    public init(p8: Secret, keyId: String, teamId: String, lifetime: Duration = .seconds(50 * 60)) throws {
        do {
            keyBytes = try P256.Signing.PrivateKey(pemRepresentation: p8.text).rawRepresentation
        } catch {
            throw SinkConfigurationError("the APNs key from \(p8.origin) is not a PEM P-256 private key")
        }
        self.keyId = keyId
        self.teamId = teamId
        self.lifetime = lifetime
    }

    /// The token to send now: the cached one while it is younger than `lifetime`.
    public func token(now: Date = Date()) throws -> String {
        try issued(now: now).token
    }

    /// The `authorization` header for the token to send now (`bearer <token>`), built once per token.
    public func authorization(now: Date = Date()) throws -> String {
        try issued(now: now).authorization
    }

    /// Drops `rejected` (the token APNs called expired) so the next ``token(now:)`` signs a new
    /// one; a token already renewed by another request is kept.
    public func invalidate(_ rejected: String) {
        current.withLock { current in
            if current?.token == rejected { current = nil }
        }
    }

    /// ``invalidate(_:)`` for the token an `authorization` header carried.
    public func invalidate(authorization rejected: String) {
        current.withLock { current in
            if current?.authorization == rejected { current = nil }
        }
    }

    private func issued(now: Date) throws -> Issued {
        try current.withLock { current in
            if let current, now.timeIntervalSince(current.issuedAt) < lifetime.seconds {
                return current
            }
            let token = try make(at: now)
            let issued = Issued(token: token, authorization: "bearer " + token, issuedAt: now)
            current = issued
            return issued
        }
    }

    private func make(at date: Date) throws -> String {
        try JSONWebToken.es256(
            header: ["kid": keyId],
            claims: ["iss": .string(teamId), "iat": .number(date.timeIntervalSince1970.rounded(.down))],
            key: try P256.Signing.PrivateKey(rawRepresentation: keyBytes)
        )
    }
}
