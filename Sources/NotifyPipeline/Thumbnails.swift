import AsyncHTTPClient
import Logging
import NIOCore
import NotifyCore
import NotifyKafka

/// Where stage 1 asks for thumbnails, and when it does not (rule 10).
public struct ThumbnailSettings: Sendable, Hashable {
    /// The thumbnail service's endpoint. For each image attachment the pipeline sends
    /// `GET <url>?url=<attachment url>&mimeType=<type>&bytes=<size>` and expects `200` with
    /// `{"url": "https://…", "mimeType": "image/…", "bytes": N}`: the thumbnail that replaces the attachment.
    public var url: String
    /// How long one lookup may take before the message goes out with its own attachment.
    public var timeout: Duration
    /// Lookups are skipped for a partition while more records than this wait on it.
    public var backlogLimit: Int64

    public init(url: String, timeout: Duration = .milliseconds(500), backlogLimit: Int64 = 1_000) {
        self.url = url
        self.timeout = timeout
        self.backlogLimit = backlogLimit
    }
}

/// Why a thumbnail lookup gave nothing; the message then goes out with its own attachment.
struct ThumbnailLookupError: Error, CustomStringConvertible {
    let description: String
}

/// Asks the thumbnail service for a small rendition of an image attachment: one HTTP request
/// per attachment, bounded by the configured timeout.
struct ThumbnailResolver: Sendable {
    let settings: ThumbnailSettings
    let client: HTTPClient

    /// The largest answer read; a thumbnail's description is a few hundred bytes.
    private static let maximumAnswerBytes = 64 * 1024

    /// The thumbnail of `attachment`, or an error saying why there is none, within the timeout
    /// (the client's deadline and a timer of our own, whichever ends the wait first).
    func thumbnail(of attachment: Attachment) async throws -> Attachment {
        let timeout = settings.timeout
        return try await withThrowingTaskGroup(of: Attachment.self) { group in
            group.addTask { try await lookUp(attachment) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw ThumbnailLookupError(description: "no answer within \(timeout.milliseconds) ms")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private func lookUp(_ attachment: Attachment) async throws -> Attachment {
        let separator = settings.url.contains("?") ? "&" : "?"
        let request = HTTPClientRequest(
            url: settings.url + separator
                + [
                    "url=" + Self.percentEncoded(attachment.url),
                    "mimeType=" + Self.percentEncoded(attachment.mimeType),
                    "bytes=\(attachment.bytes)",
                ].joined(separator: "&"))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .milliseconds(settings.timeout.milliseconds))
            body = try await response.body.collect(upTo: Self.maximumAnswerBytes)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw ThumbnailLookupError(description: "no answer within \(settings.timeout.milliseconds) ms")
        } catch {
            throw ThumbnailLookupError(description: "request failed: \(error)")
        }
        guard response.status == .ok else {
            throw ThumbnailLookupError(description: "the service answered \(response.status.code)")
        }
        return try Self.attachment(from: Array(buffer: body))
    }

    /// The thumbnail described by the service's answer.
    static func attachment(from answer: [UInt8]) throws -> Attachment {
        guard let json = try? CoreJSON.parse(answer) else {
            throw ThumbnailLookupError(description: "the answer is not JSON")
        }
        guard let url = json["url"]?.stringValue, url.hasPrefix("https://") || url.hasPrefix("http://") else {
            throw ThumbnailLookupError(description: "the answer has no http(s) \"url\"")
        }
        guard let mimeType = json["mimeType"]?.stringValue, mimeType.hasPrefix("image/") else {
            throw ThumbnailLookupError(description: "the answer's \"mimeType\" is not an image type")
        }
        guard let bytes = json["bytes"]?.intValue, bytes >= 0 else {
            throw ThumbnailLookupError(description: "the answer's \"bytes\" is not a size")
        }
        return Attachment(url: url, mimeType: mimeType, bytes: bytes)
    }

    private static let hex = Array("0123456789ABCDEF".unicodeScalars)

    /// `text` as a query value: everything but unreserved characters percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(hex[Int(byte >> 4)])
                encoded.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return encoded
    }
}

/// Stage 1's thumbnails: before a batch is folded, each message with an image attachment
/// whose partition is not backed up gets its attachment replaced by the service's thumbnail.
/// Lookups of one batch run at once; the batch is folded, in its order, when all have answered
/// or timed out, so a slow or failing service delays messages by at most the timeout and never drops one.
struct MessageThumbnails: Sendable {
    let resolver: ThumbnailResolver
    let logger: Logger
    /// Lookups under way at once.
    private let concurrency = 32

    init(settings: ThumbnailSettings, client: HTTPClient = .shared, logger: Logger) {
        resolver = ThumbnailResolver(settings: settings, client: client)
        self.logger = logger
    }

    /// `batch` with thumbnails in place of the image attachments that got one. `lag` is how many
    /// records wait on each partition beyond the batch; a partition whose backlog (the lag plus
    /// its records in the batch) is over the limit is not looked up.
    func apply(to batch: [KafkaRecord], lag: [TopicPartition: Int64]) async -> [KafkaRecord] {
        var inBatch: [Int32: Int64] = [:]
        for record in batch where record.topic == Topic.messages { inBatch[record.partition, default: 0] += 1 }
        var lookups: [(index: Int, message: MessageReceived, attachment: Attachment)] = []
        for (index, record) in batch.enumerated() where record.topic == Topic.messages {
            guard case .message(let message)? = try? InputEvent.decode(topic: record.topic, value: record.value),
                let attachment = message.attachment, attachment.mimeType.lowercased().hasPrefix("image/")
            else { continue }
            let backlog =
                (lag[TopicPartition(topic: record.topic, partition: record.partition)] ?? 0)
                + inBatch[record.partition, default: 0]
            guard backlog <= resolver.settings.backlogLimit else {
                logger.debug(
                    "Thumbnail skipped: partition backlog over the limit",
                    metadata: [
                        "message": "\(message.messageId)", "partition": "\(record.partition)", "backlog": "\(backlog)",
                    ])
                continue
            }
            lookups.append((index, message, attachment))
        }
        guard !lookups.isEmpty else { return batch }
        var records = batch
        await withTaskGroup(of: (Int, MessageReceived, Result<Attachment, any Error>).self) { group in
            var next = 0
            func startNext() {
                guard next < lookups.count else { return }
                let (index, message, attachment) = lookups[next]
                next += 1
                group.addTask {
                    do { return (index, message, .success(try await resolver.thumbnail(of: attachment))) } catch {
                        return (index, message, .failure(error))
                    }
                }
            }
            for _ in 0..<concurrency { startNext() }
            while let (index, message, result) = await group.next() {
                startNext()
                switch result {
                case .success(let thumbnail):
                    var message = message
                    message.attachment = thumbnail
                    records[index].value = CoreJSON.encode(message)
                case .failure(let error):
                    logger.warning(
                        "Message goes out without a thumbnail: \(error)", metadata: ["message": "\(message.messageId)"])
                }
            }
        }
        return records
    }
}
