import Crypto
import Foundation
import NotifySinks
import Testing

@Suite struct JSONWebTokenTests {
    let secret = Array("s3cret".utf8)

    @Test func hs256RoundTripsAndChecksSignatureAndExpiry() throws {
        let now = Date()
        let token = JSONWebToken.hs256(claims: ["sub": .string("u1"), "exp": .number(now.timeIntervalSince1970 + 60)], secret: secret)
        let claims = try JSONWebToken.verifyHS256(token, secret: secret, now: now)
        #expect(claims["sub"] == .string("u1"))
        #expect(throws: JSONWebTokenError.badSignature) { try JSONWebToken.verifyHS256(token, secret: Array("other".utf8), now: now) }
        #expect(throws: JSONWebTokenError.expired) { try JSONWebToken.verifyHS256(token, secret: secret, now: now.addingTimeInterval(120)) }
        #expect(throws: JSONWebTokenError.malformed) { try JSONWebToken.verifyHS256("not.a-token", secret: secret) }
    }

    @Test func providerTokenCarriesKidIssIatAndIsReused() throws {
        let key = P256.Signing.PrivateKey()
        let provider = try APNsProviderToken(
            p8: Secret(bytes: Array(key.pemRepresentation.utf8), origin: "test"), keyId: "KID", teamId: "TEAM",
            lifetime: .seconds(1800))
        let now = Date()
        let token = try provider.token(now: now)
        let parts = try JSONWebToken.parse(token)
        #expect(parts.header["alg"] == .string("ES256"))
        #expect(parts.header["kid"] == .string("KID"))
        #expect(parts.claims["iss"] == .string("TEAM"))
        #expect(parts.claims["iat"] == .number(now.timeIntervalSince1970.rounded(.down)))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: parts.signature)
        #expect(key.publicKey.isValidSignature(signature, for: Array(parts.signingInput.utf8)))
        // Reused within its lifetime, renewed after it or once invalidated.
        #expect(try provider.token(now: now.addingTimeInterval(1700)) == token)
        #expect(try provider.token(now: now.addingTimeInterval(1801)) != token)
        let renewed = try provider.token(now: now.addingTimeInterval(1802))
        provider.invalidate(renewed)
        #expect(try provider.token(now: now.addingTimeInterval(1803)) != renewed)
    }

    @Test func providerTokenRefusesAKeyThatIsNotP256() {
        #expect(throws: SinkConfigurationError.self) {
            try APNsProviderToken(p8: Secret(bytes: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----".utf8), origin: "test"), keyId: "K", teamId: "T")
        }
    }
}
