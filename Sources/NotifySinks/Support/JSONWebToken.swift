import Crypto
import Foundation
import _CryptoExtras

/// Compact JSON Web Tokens (RFC 7519) as the push sinks sign them: ES256 for APNs provider tokens,
/// RS256 for Google OAuth2 assertions. (The in-app gateway's HS256 tokens are jwt-kit's: ``InAppTokenClaims``.)
public enum JSONWebToken {
    /// The signing input `base64url(header).base64url(claims)`.
    static func signingInput(header: [String: String], claims: [String: JSONClaim]) -> String {
        base64URL(canonicalJSON(header.mapValues(JSONClaim.string))) + "." + base64URL(canonicalJSON(claims))
    }

    /// An ES256 token (raw r||s signature), as APNs wants it.
    public static func es256(header: [String: String], claims: [String: JSONClaim], key: P256.Signing.PrivateKey) throws
        -> String
    {
        var header = header
        header["alg"] = "ES256"
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Array(input.utf8))
        return input + "." + base64URL(Array(signature.rawRepresentation))
    }

    /// An RS256 token (RSASSA-PKCS1-v1_5 with SHA-256), as Google's token endpoint wants it.
    public static func rs256(header: [String: String], claims: [String: JSONClaim], key: _RSA.Signing.PrivateKey) throws
        -> String
    {
        var header = header
        header["alg"] = "RS256"
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(Array(signature.rawRepresentation))
    }

    /// The parts of a compact token, undecoded signature included.
    public struct Parts: Sendable {
        public var header: [String: JSONClaim]
        public var claims: [String: JSONClaim]
        public var signingInput: String
        public var signature: [UInt8]
    }

    /// Splits and decodes a compact token without checking its signature.
    public static func parse(_ token: String) throws -> Parts {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3,
            let headerBytes = decodeBase64URL(pieces[0]),
            let claimBytes = decodeBase64URL(pieces[1]),
            let signature = decodeBase64URL(pieces[2])
        else { throw JSONWebTokenError.malformed }
        let decoder = JSONDecoder()
        guard let header = try? decoder.decode([String: JSONClaim].self, from: Data(headerBytes)),
            let claims = try? decoder.decode([String: JSONClaim].self, from: Data(claimBytes))
        else { throw JSONWebTokenError.malformed }
        return Parts(header: header, claims: claims, signingInput: pieces[0] + "." + pieces[1], signature: signature)
    }

    /// Unpadded base64url.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded base64url; `nil` if it isn't.
    public static func decodeBase64URL(_ text: some StringProtocol) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }

    static func canonicalJSON(_ object: [String: JSONClaim]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a dictionary of strings and numbers cannot fail.
        return (try? Array(encoder.encode(object))) ?? []
    }
}

/// A claim or header value: the tokens here only carry strings and numbers.
public enum JSONClaim: Sendable, Hashable, Codable {
    case string(String)
    case number(Double)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        }
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

/// Why a token was refused.
public enum JSONWebTokenError: Error, Equatable {
    case malformed
}
