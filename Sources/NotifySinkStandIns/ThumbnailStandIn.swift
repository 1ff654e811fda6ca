import Foundation
import Hummingbird
import Logging
import NotifySinks
import Synchronization

/// A loopback thumbnail service for the pipeline's thumbnail lookups (rule 10), over plain
/// HTTP/1.1: `GET /thumbnail?url=…&mimeType=…&bytes=…` answers with the thumbnail of the
/// attachment at `url`, or behaves as told: slowly, or with an error status.
public final class ThumbnailStandIn: Sendable {
    /// How the service answers every request.
    public enum Behaviour: Sendable {
        /// `200` with `{"url": "<url>.thumb.jpg", "mimeType": "image/jpeg", "bytes": 24000}`.
        case answers
        /// Answers as `.answers` does, after `delay`.
        case slow(Duration)
        /// Answers `status` with no thumbnail.
        case fails(status: Int)
    }

    /// The path lookups go to.
    public static let path = "/thumbnail"
    /// The size the thumbnails it hands out declare.
    public static let thumbnailBytes: Int64 = 24_000

    private let behaviour: Behaviour
    private let asked = Mutex<[String]>([])
    private let answered = Mutex(0)
    /// Requests being answered now, and the most there were at once.
    private let load = Mutex<(now: Int, most: Int)>((0, 0))

    public init(_ behaviour: Behaviour) {
        self.behaviour = behaviour
    }

    /// The attachment URLs it was asked about, in order of arrival.
    public var requestedURLs: [String] { asked.withLock { $0 } }

    /// How many thumbnails it has handed out (a slow answer counts once its delay is over).
    public var answerCount: Int { answered.withLock { $0 } }

    /// The most lookups it was answering at once.
    public var mostConcurrentRequests: Int { load.withLock { $0.most } }

    /// The thumbnail URL it hands out for an attachment at `url`.
    public static func thumbnailURL(of url: String) -> String { url + ".thumb.jpg" }

    /// Serves on 127.0.0.1 (a free port) while `body` runs; `body` gets the lookup URL.
    public func serve<Value: Sendable>(logger: Logger, body: (String) async throws -> Value) async throws -> Value {
        let router = Router()
        router.get(RouterPath(stringLiteral: Self.path)) { request, _ in
            try await self.answer(request)
        }
        return try await serveOnLoopback(router, logger: logger) { port in
            try await body("http://127.0.0.1:\(port)\(Self.path)")
        }
    }

    private func answer(_ request: Request) async throws -> Response {
        guard let url = request.uri.queryParameters.get("url") else { return Response(status: .badRequest) }
        asked.withLock { $0.append(url) }
        load.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
        }
        defer { load.withLock { $0.now -= 1 } }
        switch behaviour {
        case .fails(let status):
            return Response(status: .init(code: status))
        case .slow(let delay):
            try await Task.sleep(for: delay)
        case .answers:
            break
        }
        answered.withLock { $0 += 1 }
        let json = try JSONSerialization.data(withJSONObject: [
            "url": Self.thumbnailURL(of: url), "mimeType": "image/jpeg", "bytes": Self.thumbnailBytes,
        ])
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }
}
