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
    public static func load(file: String?, environmentVariable: String, trimmingTrailingNewline: Bool = false) throws
        -> Secret
    {
        if let secret = try loadIfGiven(
            file: file, environmentVariable: environmentVariable, trimmingTrailingNewline: trimmingTrailingNewline)
        {
            return secret
        }
        throw SinkConfigurationError("no secret: pass a file or set \(environmentVariable)")
    }

    /// The secret in `file` if given, else in the environment variable `environmentVariable` if it is
    /// set, else `nil`. A trailing newline in a file is kept out of HMAC secrets by `trimmingTrailingNewline`.
    public static func loadIfGiven(file: String?, environmentVariable: String, trimmingTrailingNewline: Bool = false)
        throws -> Secret?
    {
        if let file { return try read(file: file, trimmingTrailingNewline: trimmingTrailingNewline) }
        if let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty {
            return Secret(bytes: Array(value.utf8), origin: "environment \(environmentVariable)")
        }
        return nil
    }

    private static func read(file: String, trimmingTrailingNewline: Bool) throws -> Secret {
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

    /// The secrets in `directory`, one per file, by file name, each without its trailing newline.
    /// Names starting with `.` are skipped (a Kubernetes Secret volume keeps its versions in `..data`
    /// and `..YYYY_MM_DD...`, and links each key's file to them), and so are subdirectories.
    /// - Throws: ``SinkConfigurationError`` when the directory or one of its files cannot be read, or a file is empty.
    public static func loadDirectory(_ directory: String) throws -> [String: Secret] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw SinkConfigurationError("cannot read secrets directory \(directory)")
        }
        var secrets: [String: Secret] = [:]
        for name in names where !name.hasPrefix(".") {
            let path = (directory as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            secrets[name] = try read(file: path, trimmingTrailingNewline: true)
        }
        return secrets
    }
}

/// A sink was configured with something it cannot use (missing secret, bad key, bad URL).
public struct SinkConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
