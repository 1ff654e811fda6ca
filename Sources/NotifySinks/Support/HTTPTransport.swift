import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import NotifyCore

/// How a sink reaches an HTTPS service: TLS verification always on, optionally trusting a private
/// CA (`--ca-file PEM`) instead of the system's roots, and a per-request deadline.
public struct HTTPTransportConfiguration: Sendable {
    /// A PEM file with the certificates to trust instead of the system roots.
    public var caFile: String?
    /// How long one request may take before it counts as a passing failure.
    public var requestTimeout: Duration
    /// HTTP/2 connections per endpoint (requests are multiplexed over them).
    public var connections: Int

    public init(caFile: String? = nil, requestTimeout: Duration = .seconds(10), connections: Int = 2) {
        self.caFile = caFile
        self.requestTimeout = requestTimeout
        self.connections = connections
    }

    /// Client TLS with full verification, trusting ``caFile`` when one is set.
    func clientTLSConfiguration() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        if let caFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw SinkConfigurationError("cannot read CA file \(caFile): \(error)")
            }
        }
        return tls
    }

    /// A client per connection: AsyncHTTPClient keeps one HTTP/2 connection per host and client.
    func makeClients(eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup) throws -> [HTTPClient] {
        var configuration = HTTPClient.Configuration(tlsConfiguration: try clientTLSConfiguration())
        configuration.httpVersion = .automatic
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(5))
        return (0..<max(1, connections)).map { _ in
            HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        }
    }
}

/// A small pool of HTTP clients used round-robin, so requests spread over a few multiplexed
/// HTTP/2 connections.
final class HTTPClientPool: Sendable {
    private let clients: [HTTPClient]
    private let next = AtomicCounter()
    let requestTimeout: TimeAmount

    init(configuration: HTTPTransportConfiguration) throws {
        clients = try configuration.makeClients()
        requestTimeout = .nanoseconds(configuration.requestTimeout.nanoseconds)
    }

    /// Sends `request` and collects the response body (up to `maxBodyBytes`).
    func execute(_ request: HTTPClientRequest, maxBodyBytes: Int = 64 * 1024) async throws -> HTTPResponseSummary {
        let client = clients[next.increment() % clients.count]
        let response = try await client.execute(request, timeout: requestTimeout)
        let body = try await response.body.collect(upTo: maxBodyBytes)
        return HTTPResponseSummary(status: response.status, headers: response.headers, body: Array(buffer: body))
    }

    func shutdown() async {
        for client in clients {
            try? await client.shutdown()
        }
    }
}

/// The parts of an HTTP response a sink classifies.
struct HTTPResponseSummary: Sendable {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: [UInt8]

    /// `Retry-After` as a duration: delta-seconds or an HTTP date.
    var retryAfter: Duration? {
        guard let value = headers.first(name: "retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        return RetryAfter.parse(value)
    }

    /// The body's JSON object, if it is one.
    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}

/// Parses the `Retry-After` header (RFC 9110 §10.2.3).
enum RetryAfter {
    static func parse(_ value: String, now: Date = Date()) -> Duration? {
        if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }
}
