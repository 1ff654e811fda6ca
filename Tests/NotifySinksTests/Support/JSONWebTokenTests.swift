import Crypto
import Foundation
import NotifySinks
import Testing

@Suite struct JSONWebTokenTests {
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
            try APNsProviderToken(
                p8: Secret(
                    bytes: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----".utf8), origin: "test"),
                keyId: "K", teamId: "T")
        }
    }
}
