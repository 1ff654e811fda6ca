import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A swift-log handler that writes one JSON object per line (`log.format: json`):
///
/// ```json
/// {"timestamp":"2026-05-04T10:00:00.123456Z","level":"info","logger":"notify.pipeline","message":"…",
///  "trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","metadata":{"stage":"route"},"source":"NotifyCLI"}
/// ```
///
/// - `timestamp`: RFC 3339, UTC, microseconds.
/// - `level`: swift-log's level name: `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`.
/// - `logger`: the logger's label.
/// - `message`: the message; newlines and other control characters escaped, so a line is always one record.
/// - `trace_id`, `span_id`: only when the metadata (usually the metadata provider of a tracer, such as
///   swift-otel's) holds them; taken out of `metadata`.
/// - `metadata`: an object, always present: the logger's metadata, then the provider's, then the call's
///   (a later one wins on a shared key). Nested dictionaries and arrays are JSON objects and arrays; every
///   leaf is a string.
/// - `source`: the module that logged.
/// - `error`: `{"type", "message"}` when the call passed an error.
///
/// Strings are written as UTF-8; `"`, `\`, U+0000…U+001F, U+007F, U+2028 and U+2029 are escaped.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public let label: String
    private let output: LogOutput

    /// - Parameters:
    ///   - output: where each line goes (with its newline); standard error unless a test says otherwise.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, output: LogOutput = .standardError) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, explicit in explicit }
        }
        output.write(
            JSONLogLine.encode(
                timestamp: LogTimestamp.now(), level: event.level, logger: label, message: event.message.description,
                metadata: merged, source: event.source, error: event.error))
    }
}

/// Where a handler's lines go.
public struct LogOutput: Sendable {
    /// Writes one whole line, newline included.
    public let write: @Sendable ([UInt8]) -> Void

    public init(write: @escaping @Sendable ([UInt8]) -> Void) {
        self.write = write
    }

    /// Standard error, one `write(2)` per line under a process-wide lock, so lines of concurrent loggers
    /// (librdkafka's threads among them) never interleave.
    public static let standardError = LogOutput { line in
        standardErrorLock.withLock { _ in writeAll(line, to: 2) }
    }

    private static let standardErrorLock = Mutex<Void>(())
}

/// Writes all of `bytes` to `descriptor`, again after an interruption or a partial write; gives up
/// silently when the descriptor fails (standard error gone: there is nowhere left to say so).
private func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

/// A wall-clock instant as a log line shows it.
struct LogTimestamp: Sendable, Hashable {
    var seconds: Int
    var microseconds: Int

    static func now() -> LogTimestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return LogTimestamp(seconds: Int(time.tv_sec), microseconds: Int(time.tv_nsec) / 1000)
    }

    /// `2026-05-04T10:00:00.123456Z`.
    var rfc3339: String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func digits(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(digits(parts.tm_year + 1900, 4))-\(digits(parts.tm_mon + 1, 2))-\(digits(parts.tm_mday, 2))"
            + "T\(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):\(digits(parts.tm_sec, 2))"
            + ".\(digits(Int32(microseconds), 6))Z"
    }
}

/// The bytes of one JSON log line.
enum JSONLogLine {
    /// The metadata keys that become top-level fields: those of the W3C trace context, as swift-otel's
    /// metadata provider names them.
    static let liftedKeys = ["trace_id", "span_id"]

    static func encode(
        timestamp: LogTimestamp, level: Logger.Level, logger: String, message: String, metadata: Logger.Metadata,
        source: String, error: (any Error)? = nil
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + message.utf8.count)
        var metadata = metadata
        out += #"{"timestamp":"#.utf8
        appendString(timestamp.rfc3339, to: &out)
        out += #","level":"#.utf8
        appendString(level.rawValue, to: &out)
        out += #","logger":"#.utf8
        appendString(logger, to: &out)
        out += #","message":"#.utf8
        appendString(message, to: &out)
        for key in liftedKeys {
            switch metadata[key] {
            case .string(let text)?: appendField(key, text, to: &out)
            case .stringConvertible(let value)?: appendField(key, value.description, to: &out)
            default: continue  // absent, or a nested value: it stays in metadata
            }
            metadata[key] = nil
        }
        out += #","metadata":"#.utf8
        appendValue(.dictionary(metadata), to: &out)
        out += #","source":"#.utf8
        appendString(source, to: &out)
        if let error {
            out += #","error":{"type":"#.utf8
            appendString(String(reflecting: type(of: error)), to: &out)
            out += #","message":"#.utf8
            appendString(String(describing: error), to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out += "}\n".utf8
        return out
    }

    private static func appendField(_ key: String, _ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        appendString(key, to: &out)
        out.append(UInt8(ascii: ":"))
        appendString(value, to: &out)
    }

    /// A metadata value: dictionaries as objects (keys sorted), arrays as arrays, everything else as a string.
    static func appendValue(_ value: Logger.Metadata.Value, to out: inout [UInt8]) {
        switch value {
        case .string(let text):
            appendString(text, to: &out)
        case .stringConvertible(let convertible):
            appendString(convertible.description, to: &out)
        case .dictionary(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                appendValue(members[key]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendValue(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `text` as a JSON string: UTF-8, with quotes, backslashes and control characters escaped, and DEL,
    /// U+2028 and U+2029 too (JavaScript and some terminals treat them as line breaks or controls).
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: out += [0x5C, 0x22]  // \"
            case 0x5C: out += [0x5C, 0x5C]  // \\
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x00...0x1F, 0x7F, 0x2028, 0x2029:
                let value = Int(scalar.value)
                out += [
                    0x5C, UInt8(ascii: "u"), hex[value >> 12 & 0xF], hex[value >> 8 & 0xF], hex[value >> 4 & 0xF],
                    hex[value & 0xF],
                ]
            case 0x20...0x7E:
                out.append(UInt8(scalar.value))
            default:
                UTF8.encode(scalar) { out.append($0) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
