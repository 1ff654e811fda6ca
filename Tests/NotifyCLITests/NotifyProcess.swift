import Foundation
import NotifyKafka
import Synchronization
import Testing

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A running `notify` process of the built executable, its output (stdout and stderr) collected line by line.
final class NotifyProcess: Sendable {
    private let process: Process
    private let lines = LineBuffer()
    /// Standard error's lines, when it is read apart from standard output.
    private let errorLines = LineBuffer()
    private let input = Pipe()
    private let events = ProcessEvents()

    /// What the output reader and the termination handler share with the test.
    private final class ProcessEvents: Sendable {
        /// A signal to send when a line appears, and when it was sent.
        struct SignalTrigger: Sendable {
            var signal: Int32
            var condition: @Sendable (String) -> Bool
            var sentAt: ContinuousClock.Instant?
        }

        let trigger = Mutex<SignalTrigger?>(nil)
        let exited = Mutex<ContinuousClock.Instant?>(nil)
        let processId = Mutex<Int32>(0)
    }

    /// - Parameters:
    ///   - environment: variables set for the process besides this one's.
    ///   - separateStandardError: read standard error apart (``errorOutput``); ``output`` then has
    ///     standard output's lines followed by standard error's.
    init(_ arguments: [String], environment: [String: String] = [:], separateStandardError: Bool = false) throws {
        let candidates = [
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("notify"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("notify"),
        ]
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ProcessFailure("notify is not built next to the tests")
        }
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, set in set }
        }
        process.currentDirectoryURL = repositoryRoot
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        let events = events
        process.terminationHandler = { _ in events.exited.withLock { $0 = .now } }
        Self.collect(output, into: lines, events: events)
        if separateStandardError {
            let error = Pipe()
            process.standardError = error
            Self.collect(error, into: errorLines, events: events)
        } else {
            process.standardError = output
            errorLines.markEnded()  // Nothing to read apart.
        }
        try EmbeddedBroker.startingChildProcess { try process.run() }
        events.processId.withLock { $0 = process.processIdentifier }
    }

    /// Splits what `pipe` delivers into `buffer`'s lines (a line cut between two reads is joined again),
    /// and sends the armed signal when a line satisfies its condition.
    ///
    /// The pipe is read with blocking reads on a thread of its own, not with `readabilityHandler`:
    /// that handler's libdispatch read source can be torn down while the manager thread still holds
    /// its epoll note, which crashed a test process with SIGSEGV in `_dispatch_event_loop_drain`
    /// (swift-corelibs-libdispatch issue 949).
    private static func collect(_ pipe: Pipe, into buffer: LineBuffer, events: ProcessEvents) {
        let reader = Thread {
            let descriptor = pipe.fileHandleForReading.fileDescriptor
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                append(String(decoding: chunk[..<count], as: UTF8.self), to: buffer, events: events)
            }
            buffer.markEnded()
        }
        reader.name = "notify output reader"
        reader.start()
    }

    private static func append(_ text: String, to buffer: LineBuffer, events: ProcessEvents) {
        buffer.withLock { lines in
            var pieces = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if let last = lines.last, let first = pieces.first {
                lines[lines.count - 1] = last + first
                pieces.removeFirst()
            }
            lines += pieces
        }
        events.trigger.withLock { armed in
            guard var pending = armed, pending.sentAt == nil,
                text.split(separator: "\n").contains(where: { pending.condition(String($0)) })
            else { return }
            Foundation.kill(events.processId.withLock { $0 }, pending.signal)
            pending.sentAt = .now
            armed = pending
        }
    }

    /// The address of /healthz, /readyz and /metrics a `notify pipeline` or `notify sink` logged
    /// ("Serving /healthz ... at http://HOST:PORT").
    func serviceBase() async throws -> String {
        let line = try await waitForLine { $0.contains("Serving /healthz") }
        guard let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
            throw ProcessFailure("no address in: \(line)")
        }
        return String(url)
    }

    /// Everything printed so far, as lines.
    var output: [String] { (lines.withLock { $0 } + errorLines.withLock { $0 }).filter { !$0.isEmpty } }

    /// What was written to standard output so far, as lines (standard error too, unless read apart).
    var standardOutput: [String] { lines.withLock { $0.filter { !$0.isEmpty } } }

    /// What was written to standard error so far, as lines, when it is read apart; the last one may be
    /// incomplete while the process runs.
    var errorOutput: [String] { errorLines.withLock { $0.filter { !$0.isEmpty } } }

    /// Waits until standard error, read apart, has been read to its end (the process exited and its
    /// last line is in ``errorOutput``).
    func waitForErrorOutputEnd(timeout: Duration = .seconds(10)) async throws {
        guard try await readToEnd([errorLines], timeout: timeout) else {
            throw ProcessFailure("standard error not read to its end")
        }
    }

    /// Waits until each of `buffers` has been read to its end; false if `timeout` passed first.
    private func readToEnd(_ buffers: [LineBuffer], timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !buffers.allSatisfy(\.hasEnded) {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Waits until a line satisfies `condition` and returns it.
    @discardableResult
    func waitForLine(timeout: Duration = .seconds(90), _ condition: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.first(where: condition) { return line }
            guard process.isRunning else {
                throw ProcessFailure(
                    "notify exited (\(process.terminationStatus)); output:\n\(output.joined(separator: "\n"))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ProcessFailure("timed out; output so far:\n\(output.suffix(30).joined(separator: "\n"))")
    }

    /// Sends `signal` from the output reader itself, the moment a line satisfies `condition` (the test's
    /// own tasks can be late on a loaded machine), then waits for the process to exit; returns how long
    /// after the signal it exited, or nil if no such line came.
    func signal(
        _ signal: Int32, onLine condition: @escaping @Sendable (String) -> Bool, timeout: Duration = .seconds(90)
    ) async throws -> Duration? {
        events.trigger.withLock { $0 = ProcessEvents.SignalTrigger(signal: signal, condition: condition) }
        _ = try await exitStatus(timeout: timeout)
        guard let sent = events.trigger.withLock({ $0?.sentAt }) else { return nil }
        // The termination handler may run just after the process is seen not running.
        for _ in 0..<100 {
            if let end = events.exited.withLock({ $0 }) { return end - sent }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessFailure("the process ended but its termination handler did not run")
    }

    /// Writes to standard input and closes it.
    func send(_ text: String) throws {
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
    }

    /// Sends `signal` (SIGTERM unless told) and returns how long the process took to exit, and its status.
    func terminate(signal: Int32 = SIGTERM, timeout: Duration = .seconds(30)) async throws -> (Duration, Int32) {
        let started = ContinuousClock.now
        Foundation.kill(process.processIdentifier, signal)
        while process.isRunning {
            guard ContinuousClock.now - started < timeout else {
                let lines = output.suffix(20).joined(separator: "\n")
                throw ProcessFailure("did not exit after signal \(signal) in \(timeout); its last lines:\n\(lines)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (ContinuousClock.now - started, process.terminationStatus)
    }

    /// Waits for the process to end by itself and returns its status, once its output has been read
    /// to its end: the reading threads may still hold its last lines when it exits (a process that
    /// printed one error line and exited once showed none). A child process that keeps the pipe open
    /// is waited for at most 5 s.
    func exitStatus(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let started = ContinuousClock.now
        while process.isRunning {
            guard ContinuousClock.now - started < timeout else { throw ProcessFailure("did not exit") }
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = try await readToEnd([lines, errorLines], timeout: .seconds(5))
        return process.terminationStatus
    }

    /// Sends `signal`, and returns at once.
    func send(signal: Int32) {
        Foundation.kill(process.processIdentifier, signal)
    }

    /// SIGKILL, for clean-up after a failure.
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}

struct ProcessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Lines written by a process, shared with the pipe's reading handler.
final class LineBuffer: Sendable {
    private let lines = Mutex<[String]>([])
    private let ended = Mutex(false)

    /// Whether the pipe has been read to its end.
    var hasEnded: Bool { ended.withLock { $0 } }

    func markEnded() {
        ended.withLock { $0 = true }
    }

    func withLock<R: Sendable>(_ body: (inout [String]) -> R) -> R {
        lines.withLock { body(&$0) }
    }
}
