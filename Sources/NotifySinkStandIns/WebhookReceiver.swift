import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NotifySinks

/// A loopback webhook receiver over TLS: verifies `X-Notify-Signature` over
/// `X-Notify-Timestamp` and the body with the shared secret (401 if wrong or older than five
/// minutes), then accepts the command, or gives the answer scripted for its command id.
public final class WebhookReceiver: Sendable {
    /// One accepted delivery.
    public struct Delivery: Sendable {
        public var commandId: String
        public var body: [UInt8]
    }

    /// What it accepted, and the answers it is told to give (keyed by command id).
    public let ledger = StandInLedger<Delivery>()
    private let secret: [UInt8]

    /// - Parameter secret: the shared HMAC secret signatures are checked with.
    public init(secret: [UInt8]) {
        self.secret = secret
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
        guard let signature = field(WebhookSignature.signatureHeader, in: request.headers),
              let timestamp = field(WebhookSignature.timestampHeader, in: request.headers),
              let seconds = TimeInterval(timestamp), abs(Date().timeIntervalSince1970 - seconds) < 300,
              WebhookSignature.verify(signature, secret: secret, timestamp: timestamp, body: body)
        else {
            return Response(status: .unauthorized)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
              let commandId = object["id"] as? String
        else {
            return Response(status: .badRequest)
        }
        if let refusal = try await play(ledger.nextAnswer(for: commandId), unavailableReason: "", refusal: { status, _, retryAfter in
            Response(status: .init(code: status), headers: retryAfterHeader(retryAfter))
        }, accept: { ledger.accept(Delivery(commandId: commandId, body: body)) }) {
            return refusal
        }
        return Response(status: .noContent)
    }
}
