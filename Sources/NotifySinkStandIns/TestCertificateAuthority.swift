import Foundation
import NIOSSL

/// A throwaway certificate authority and a server certificate for 127.0.0.1 / localhost, made
/// with the `openssl` command in a temporary directory. The sinks trust the CA through
/// `--ca-file` (``caFile``), so TLS verification stays on against the loopback stand-ins.
public struct TestCertificateAuthority: Sendable {
    /// The directory holding the files; removed by ``remove()``.
    public let directory: String
    /// The CA certificate (PEM): what a sink's `--ca-file` points at.
    public var caFile: String { directory + "/ca.pem" }
    /// The server certificate (PEM), signed by the CA, for IP 127.0.0.1 and DNS localhost.
    public var certificateFile: String { directory + "/server.pem" }
    /// The server's private key (PEM).
    public var keyFile: String { directory + "/server.key" }

    /// Creates the CA and the server certificate (P-256 keys, valid two days).
    public static func make() async throws -> TestCertificateAuthority {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("notify-test-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let extensions = """
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth
            subjectAltName=IP:127.0.0.1,DNS:localhost
            """
        try extensions.write(toFile: directory + "/server.ext", atomically: true, encoding: .utf8)
        let authority = TestCertificateAuthority(directory: directory)
        let file = { (name: String) in directory + "/" + name }
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(
            ["req", "-x509"] + curve + [
                "-keyout", file("ca.key"), "-out", authority.caFile, "-days", "2", "-subj", "/CN=notify test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try await openssl(
            ["req"] + curve + ["-keyout", authority.keyFile, "-out", file("server.csr"), "-subj", "/CN=localhost"])
        try await openssl([
            "x509", "-req", "-in", file("server.csr"), "-CA", authority.caFile, "-CAkey", file("ca.key"),
            "-set_serial", "0x" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16),
            "-out", authority.certificateFile, "-days", "2", "-extfile", file("server.ext"),
        ])
        return authority
    }

    /// A server TLS configuration presenting the server certificate.
    public func serverTLSConfiguration() throws -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
        )
    }

    /// Deletes the files.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `openssl` with absolute paths only: setting a child's working directory would change
    /// this whole process's for a moment (Foundation's `Process` on Linux), under other tests' feet.
    private static func openssl(_ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw CertificateAuthorityError(description: "openssl \(arguments.first ?? "") failed: \(message)")
        }
    }
}

/// `openssl` could not make the certificates.
public struct CertificateAuthorityError: Error, CustomStringConvertible {
    public var description: String
}
