import Foundation
import JWTKit
import Logging
import NIOPosix
import Synchronization

/// The claims of an in-app bearer token: `sub` (user id), `did` (device id), `exp`, and optionally
/// `nbf` and `iat`. Its header names the secret it is signed with in `kid` (none: the secret
/// without a key id).
public struct InAppTokenClaims: JWTPayload, Equatable {
    /// The user id.
    public var sub: SubjectClaim
    /// The device id.
    public var did: String
    /// The token is refused from this time on (give or take the gateway's clock leeway).
    public var exp: ExpirationClaim
    /// The token is refused before this time (give or take the leeway).
    public var nbf: NotBeforeClaim?
    /// When the token was issued; one issued after now (give or take the leeway) is refused as not yet valid.
    public var iat: IssuedAtClaim?

    public init(userId: String, deviceId: String, expires: Date, notBefore: Date? = nil, issuedAt: Date? = nil) {
        sub = SubjectClaim(value: userId)
        did = deviceId
        exp = ExpirationClaim(value: expires)
        nbf = notBefore.map(NotBeforeClaim.init(value:))
        iat = issuedAt.map(IssuedAtClaim.init(value:))
    }

    /// jwt-kit calls this once the signature is verified; the times are checked by the gateway
    /// afterwards, with its clock leeway (``InAppTokenVerifier``), so there is nothing left to do here.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// Signs these claims with HS256 and `secret`, naming `kid` in the header (`nil`: no `kid`).
    /// For `notify dev` and tests: apps get their tokens from the backend that holds the same secret.
    public func signed(secret: [UInt8], kid: String? = nil) async throws -> String {
        let keys = await JWTKeyCollection().add(
            hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: kid.map(JWKIdentifier.init(string:)))
        return try await keys.sign(self, kid: kid.map(JWKIdentifier.init(string:)))
    }
}

/// Why a bearer token was refused: the reason first (`missing`, `malformed`, `unknown kid`,
/// `bad signature`, `expired`, `not yet valid`), then what was wrong, as the `WWW-Authenticate`
/// challenge's `error_description` says it.
public struct TokenRefusal: Error, Equatable, CustomStringConvertible {
    /// The reason, one of the six above.
    public let reason: String
    /// What was wrong, for the client's developer.
    public let detail: String

    public var description: String { "\(reason): \(detail)" }

    static func missing(_ detail: String) -> TokenRefusal { TokenRefusal(reason: "missing", detail: detail) }
    static func malformed(_ detail: String) -> TokenRefusal { TokenRefusal(reason: "malformed", detail: detail) }
    static func unknownKid(_ detail: String) -> TokenRefusal { TokenRefusal(reason: "unknown kid", detail: detail) }
    static func badSignature(_ detail: String) -> TokenRefusal { TokenRefusal(reason: "bad signature", detail: detail) }
    static func expired(_ detail: String) -> TokenRefusal { TokenRefusal(reason: "expired", detail: detail) }
    static func notYetValid(_ detail: String) -> TokenRefusal { TokenRefusal(reason: "not yet valid", detail: detail) }
}

/// Where the gateway's HS256 secrets come from: one secret for tokens without `kid` (the
/// `--secret-file` or `NOTIFY_INAPP_SECRET` of old), and a directory whose files are secrets named
/// by their key id, read again while the gateway runs so a secret can be added and retired without
/// a restart. At least one of the two.
public struct InAppTokenSecrets: Sendable {
    /// The secret of tokens without `kid`.
    public var withoutKid: Secret?
    /// The directory of secrets by key id (file name).
    public var directory: String?
    /// How often the directory is read again.
    public var reloadInterval: Duration

    /// The least length of a secret: HS256 keys are at least as long as the hash (RFC 7518, 3.2).
    public static let minimumLength = 32

    public init(withoutKid: Secret? = nil, directory: String? = nil, reloadInterval: Duration = .seconds(5)) {
        self.withoutKid = withoutKid
        self.directory = directory
        self.reloadInterval = reloadInterval
    }

    /// The secrets now: `nil` keys the one without `kid`.
    /// - Throws: ``SinkConfigurationError`` when there is none, one is shorter than ``minimumLength``
    ///   or the directory cannot be read.
    func read() throws -> [String?: [UInt8]] {
        var secrets: [String?: [UInt8]] = [:]
        if let withoutKid { secrets[nil] = withoutKid.bytes }
        if let directory {
            for (kid, secret) in try Secret.loadDirectory(directory) { secrets[kid] = secret.bytes }
        }
        guard !secrets.isEmpty else {
            throw SinkConfigurationError(
                "no in-app token secret: pass --secret-file (or set NOTIFY_INAPP_SECRET) or --secrets-dir with at least one file"
            )
        }
        if let short = secrets.first(where: { $0.value.count < Self.minimumLength }) {
            throw SinkConfigurationError(
                "the in-app token secret \(short.key.map { "of kid \($0)" } ?? "without kid") has \(short.value.count) bytes; HS256 needs at least \(Self.minimumLength)"
            )
        }
        return secrets
    }
}

/// Checks the gateway's bearer tokens with jwt-kit: HS256 with the secret the header's `kid`
/// names, then `exp`, `nbf` and `iat` within `clockLeeway` of this host's clock.
final class InAppTokenVerifier: Sendable {
    /// One reading of the secrets, as jwt-kit keys.
    private struct Keys: Sendable {
        let collection: JWTKeyCollection
        let secrets: [String?: [UInt8]]

        init(_ secrets: [String?: [UInt8]]) async {
            let collection = JWTKeyCollection()
            for (kid, secret) in secrets {
                await collection.add(
                    hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: kid.map(JWKIdentifier.init(string:)))
            }
            // jwt-kit falls back to its first key for a token without kid; only the secret without kid may sign those.
            if secrets[nil] == nil { await collection.clearDefault() }
            self.collection = collection
            self.secrets = secrets
        }

        /// The key ids, for logs (never the secrets).
        var kids: String {
            secrets.keys.map { $0 ?? "(none)" }.sorted().joined(separator: ", ")
        }
    }

    private let source: InAppTokenSecrets
    private let clockLeeway: Duration
    private let logger: Logger
    private let keys = Mutex<Keys?>(nil)

    init(secrets: InAppTokenSecrets, clockLeeway: Duration, logger: Logger) {
        source = secrets
        self.clockLeeway = clockLeeway
        self.logger = logger
    }

    /// Reads the secrets; throws if they can't be used. The gateway calls it before it listens.
    func load() async throws {
        let keys = await Keys(try await readSecrets())
        self.keys.withLock { $0 = keys }
        logger.info("in-app token secrets loaded", metadata: ["kids": "\(keys.kids)"])
    }

    /// The secrets as the files say now, read on a thread of NIO's pool: file calls block, and the
    /// cooperative pool runs every task of the process on a few threads.
    private func readSecrets() async throws -> [String?: [UInt8]] {
        try await NIOThreadPool.singleton.runIfActive { [source] in try source.read() }
    }

    /// Reads the secrets directory again every `reloadInterval` until cancelled; a change takes
    /// effect for the next connections (open ones stay). A directory that can't be used is logged
    /// and the secrets read before stay.
    func reloadUntilCancelled() async {
        guard source.directory != nil else { return }
        while !Task.isCancelled {
            do { try await Task.sleep(for: source.reloadInterval) } catch { return }
            do {
                let secrets = try await readSecrets()
                guard keys.withLock({ $0?.secrets != secrets }) else { continue }
                let keys = await Keys(secrets)
                self.keys.withLock { $0 = keys }
                logger.notice("in-app token secrets changed", metadata: ["kids": "\(keys.kids)"])
            } catch {
                logger.warning(
                    "in-app token secrets not read again, the ones read before stay", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The claims of the token an `Authorization` header value carries, or why it is refused.
    func verify(authorization: String?, now: Date = Date()) async -> Result<InAppTokenClaims, TokenRefusal> {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            return .failure(.missing("a bearer token is required"))
        }
        let token = Array(authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces).utf8)
        guard !token.isEmpty else { return .failure(.missing("a bearer token is required")) }
        guard let keys = keys.withLock({ $0 }) else {
            return .failure(.unknownKid("the gateway has not read its secrets yet"))
        }
        let header: JWTHeader
        do {
            header = try DefaultJWTParser().parse(token, as: InAppTokenClaims.self).header
        } catch {
            return .failure(
                .malformed(
                    "not a compact JWT whose claims are sub, did and exp (numbers of seconds), with nbf and iat optional"
                ))
        }
        guard header.alg == "HS256" else { return .failure(.badSignature("the token is not signed with HS256")) }
        if let kid = header.kid {
            guard keys.secrets[kid] != nil else {
                return .failure(.unknownKid("the token's kid names no secret of this gateway"))
            }
        } else if keys.secrets[nil] == nil {
            return .failure(.unknownKid("the token has no kid, and this gateway has no secret without one"))
        }
        let claims: InAppTokenClaims
        do {
            claims = try await keys.collection.verify(token, as: InAppTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return .failure(.badSignature("the token is not signed with the secret its kid names"))
        } catch {
            return .failure(.malformed("the token could not be verified"))
        }
        let leeway = clockLeeway.seconds
        if claims.exp.value.timeIntervalSince(now) <= -leeway {
            return .failure(.expired("the token expired at \(claims.exp.value.formatted(.iso8601))"))
        }
        if let notBefore = claims.nbf?.value, notBefore.timeIntervalSince(now) > leeway {
            return .failure(.notYetValid("the token is valid from \(notBefore.formatted(.iso8601)) (nbf)"))
        }
        if let issued = claims.iat?.value, issued.timeIntervalSince(now) > leeway {
            return .failure(
                .notYetValid(
                    "the token is issued at \(issued.formatted(.iso8601)) (iat), later than this gateway's clock"))
        }
        guard !claims.sub.value.isEmpty, !claims.did.isEmpty else {
            return .failure(.malformed("sub and did must not be empty"))
        }
        return .success(claims)
    }
}
