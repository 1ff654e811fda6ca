import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NotifySinks

/// A loopback webhook receiver over TLS: verifies the Standard Webhooks signature
/// (`webhook-signature` over `webhook-id`, `webhook-timestamp` and the body, any of its `v1`
/// signatures with any of its keys; 401 if none is right, or the timestamp is further than
/// `tolerance` from its clock either way), then accepts the command, or gives the answer scripted
/// for its command id.
public final class WebhookReceiver: Sendable {
    /// One accepted delivery.
    public struct Delivery: Sendable {
        public var commandId: String
        public var body: [UInt8]
        /// The request's headers, by lowercase name.
        public var headers: [String: String]
    }

    /// What it accepted, and the answers it is told to give (keyed by command id).
    public let ledger = StandInLedger<Delivery>()
    private let keys: [[UInt8]]
    private let tolerance: TimeInterval

    /// - Parameters:
    ///   - keys: the HMAC keys signatures are checked with (the decoded bytes of a `whsec_` secret).
    ///   - tolerance: how far `webhook-timestamp` may be from now, either way (the reference libraries' 5 minutes).
    public init(keys: [[UInt8]], tolerance: TimeInterval = 300) {
        self.keys = keys
        self.tolerance = tolerance
    }

    /// A receiver that checks signatures with one key.
    public convenience init(secret: [UInt8]) {
        self.init(keys: [secret])
    }

    /// The path deliveries go to.
    public static let path = "/hooks/notify"

    /// Serves on 127.0.0.1 (a free port) while `body` runs.
    public func serve<Value: Sendable>(
        tls authority: TestCertificateAuthority, logger: Logger, body: (Int) async throws -> Value
    ) async throws -> Value {
        let router = Router()
        router.post(RouterPath(stringLiteral: Self.path)) { request, _ in
            try await self.receive(request)
        }
        return try await serveOverTLS(router, authority: authority, logger: logger, body: body)
    }

    private func receive(_ request: Request) async throws -> Response {
        let body = Array(buffer: try await request.body.collect(upTo: 1024 * 1024))
        guard let id = field(StandardWebhookSignature.idHeader, in: request.headers),
            let signature = field(StandardWebhookSignature.signatureHeader, in: request.headers),
            let timestamp = field(StandardWebhookSignature.timestampHeader, in: request.headers),
            let seconds = Int(timestamp), abs(Date().timeIntervalSince1970 - TimeInterval(seconds)) <= tolerance,
            StandardWebhookSignature.verify(signature, id: id, timestamp: timestamp, body: body, keys: keys)
        else {
            return Response(status: .unauthorized)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let commandId = object["id"] as? String
        else {
            return Response(status: .badRequest)
        }
        if let refusal = try await play(
            ledger.nextAnswer(for: commandId), unavailableReason: "",
            refusal: { status, _, retryAfter in
                Response(status: .init(code: status), headers: retryAfterHeader(retryAfter))
            },
            accept: {
                let headers = Dictionary(
                    request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { first, _ in first })
                ledger.accept(Delivery(commandId: commandId, body: body, headers: headers))
            })
        {
            return refusal
        }
        return Response(status: .noContent)
    }
}
