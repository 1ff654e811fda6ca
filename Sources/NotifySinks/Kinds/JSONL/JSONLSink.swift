import NIOPosix
import NotifyCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `jsonl` kind: appends each delivered command, one JSON line, to a file (created if
/// missing). For debugging and tests. Each line is one `write` to a file opened with `O_APPEND`,
/// so lines never interleave; writes run on NIO's blocking-I/O thread pool, never on the
/// cooperative pool.
public final class JSONLSink: NotificationSink {
    public let kind = "jsonl"

    private let selection: CommandSelection
    private let descriptor: Int32

    /// Opens (or creates) `path` for appending; `selection` picks the commands to write.
    public init(path: String, selection: CommandSelection = .all) throws {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw SinkConfigurationError("cannot open \(path) for appending (errno \(errno))")
        }
        self.selection = selection
    }

    public func accepts(_ command: NotificationCommand) -> Bool {
        selection.matches(command)
    }

    public func deliver(_ delivery: Delivery) async -> DeliveryResult {
        let line = delivery.json + [UInt8(ascii: "\n")]
        let descriptor = self.descriptor
        do {
            try await NIOThreadPool.singleton.runIfActive {
                let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard written == line.count else { throw JSONLWriteError(errno: errno) }
            }
            return .delivered
        } catch {
            return .retryable(reason: "write: \(error)")
        }
    }

    public func shutdown() async {
        close(descriptor)
    }
}

/// A line could not be appended in full.
struct JSONLWriteError: Error, CustomStringConvertible {
    var errno: Int32
    var description: String { "write failed (errno \(errno))" }
}
