import Foundation

/// A secret (private key, service account, shared HMAC secret) read from a file or an environment
/// variable. Its `description` never shows the value, so it can't leak into logs by accident.
public struct Secret: Sendable, CustomStringConvertible {
    /// The secret's bytes.
    public let bytes: [UInt8]
    /// Where it came from, for messages (`file /path` or `environment NAME`).
    public let origin: String

    public init(bytes: [UInt8], origin: String) {
        self.bytes = bytes
        self.origin = origin
    }

    /// The secret as UTF-8 text (PEM keys, JSON).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public var description: String { "<secret from \(origin)>" }

    /// Reads a secret from `file` if given, else from the environment variable `environmentVariable`.
    /// A trailing newline in a file is kept out of HMAC secrets by `trimmingTrailingNewline`.
    public static func load(file: String?, environmentVariable: String, trimmingTrailingNewline: Bool = false) throws -> Secret {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw SinkConfigurationError("cannot read secret file \(file)")
            }
            var bytes = [UInt8](data)
            if trimmingTrailingNewline {
                while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
            }
            guard !bytes.isEmpty else { throw SinkConfigurationError("secret file \(file) is empty") }
            return Secret(bytes: bytes, origin: "file \(file)")
        }
        if let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty {
            return Secret(bytes: Array(value.utf8), origin: "environment \(environmentVariable)")
        }
        throw SinkConfigurationError("no secret: pass a file or set \(environmentVariable)")
    }
}

/// A sink was configured with something it cannot use (missing secret, bad key, bad URL).
public struct SinkConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
