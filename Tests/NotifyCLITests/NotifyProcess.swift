import Foundation
import Synchronization
import Testing

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A running `notify` process of the built executable, its output (stdout and stderr) collected line by line.
final class NotifyProcess: Sendable {
    private let process: Process
    private let lines = LineBuffer()
    private let input = Pipe()

    init(_ arguments: [String]) throws {
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
        process.currentDirectoryURL = repositoryRoot
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        let lines = lines
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else { handle.readabilityHandler = nil; return }
            let text = String(decoding: data, as: UTF8.self)
            lines.withLock { lines in
                var pieces = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                if let last = lines.last, !last.hasSuffix("\n"), !lines.isEmpty, let first = pieces.first {
                    lines[lines.count - 1] = last + first
                    pieces.removeFirst()
                }
                lines += pieces
            }
        }
        try process.run()
    }

    /// Everything printed so far, as lines.
    var output: [String] { lines.withLock { $0.filter { !$0.isEmpty } } }

    /// Waits until a line satisfies `condition` and returns it.
    @discardableResult
    func waitForLine(timeout: Duration = .seconds(90), _ condition: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.first(where: condition) { return line }
            guard process.isRunning else { throw ProcessFailure("notify exited (\(process.terminationStatus)); output:\n\(output.joined(separator: "\n"))") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ProcessFailure("timed out; output so far:\n\(output.suffix(30).joined(separator: "\n"))")
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
            guard ContinuousClock.now - started < timeout else { throw ProcessFailure("did not exit after signal \(signal)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (ContinuousClock.now - started, process.terminationStatus)
    }

    /// Waits for the process to end by itself and returns its status.
    func exitStatus(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let started = ContinuousClock.now
        while process.isRunning {
            guard ContinuousClock.now - started < timeout else { throw ProcessFailure("did not exit") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
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

    func withLock<R: Sendable>(_ body: (inout [String]) -> R) -> R {
        lines.withLock { body(&$0) }
    }
}
