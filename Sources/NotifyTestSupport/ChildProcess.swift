import Foundation
import NotifyKafka

/// What a child process left behind when it ended.
public struct ChildProcessResult: Sendable {
    /// The exit status, or the number of the signal that ended it.
    public var status: Int32
    /// Everything it wrote to standard output.
    public var output: Data
    /// Everything it wrote to standard error.
    public var errors: Data

    /// Standard output as UTF-8 text.
    public var outputText: String { String(decoding: output, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var errorText: String { String(decoding: errors, as: UTF8.self) }
}

/// Runs a program to its end for a test, without blocking a thread of Swift's cooperative pool
/// (two threads on a two-core machine, shared by every test running beside this one): the pipes
/// are written and read on threads of their own, and the exit arrives through the termination
/// handler. A process still running after `timeout` is killed by its PID. It is started through
/// `EmbeddedBroker.startingChildProcess`, so that a test taking an embedded broker down beside it
/// does not abort the test process.
///
/// - Parameters:
///   - executable: the program; a bare name is looked up on `PATH` through `/usr/bin/env`.
///   - arguments: its arguments.
///   - input: written to its standard input, which is then closed; without it, the input is empty.
///   - timeout: how long it may run.
public func runChildProcess(
    _ executable: String, _ arguments: [String], input: Data? = nil, timeout: Duration = .seconds(60)
) async throws -> ChildProcessResult {
    let process = Process()
    if executable.hasPrefix("/") {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
    }
    let output = Pipe()
    let errors = Pipe()
    let standardInput = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = standardInput
    let (ended, end) = AsyncStream<Void>.makeStream()
    process.terminationHandler = { _ in end.finish() }
    try EmbeddedBroker.startingChildProcess { try process.run() }
    let outputData = readToEnd(output.fileHandleForReading)
    let errorData = readToEnd(errors.fileHandleForReading)
    let writer = standardInput.fileHandleForWriting
    Thread.detachNewThread {
        if let input { writer.write(input) }
        try? writer.close()
    }
    let pid = process.processIdentifier
    let watchdog = Task {
        try await Task.sleep(for: timeout)
        kill(pid, SIGKILL)
    }
    for await _ in ended {}
    watchdog.cancel()
    return ChildProcessResult(
        status: process.terminationStatus, output: await outputData.value, errors: await errorData.value)
}

/// Reads `handle` to its end on a thread of its own.
private func readToEnd(_ handle: FileHandle) -> Task<Data, Never> {
    let (stream, continuation) = AsyncStream<Data>.makeStream()
    Thread.detachNewThread {
        continuation.yield(handle.readDataToEndOfFile())
        continuation.finish()
    }
    return Task { await stream.first { _ in true } ?? Data() }
}
