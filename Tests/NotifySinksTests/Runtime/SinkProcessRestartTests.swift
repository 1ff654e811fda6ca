import Foundation
import NotifyCore
import NotifyKafka
import NotifySinkStandIns
import NotifySinks
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `notify sink` process started by a test, killed by its PID (never by name).
final class SinkProcess: Sendable {
    let process: Process
    let log: String

    init(arguments: [String]) throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("notify")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw SinkConfigurationError("the notify executable is not built next to the tests (\(executable.path))")
        }
        log = try temporaryFile("sink.log", contents: [])
        process = Process()
        process.executableURL = executable
        process.arguments = ["sink", "--http-listen", "127.0.0.1:0"] + arguments
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try EmbeddedBroker.startingChildProcess { try process.run() }
    }

    /// Sends `signal` to the process and waits until it has exited; returns its status.
    @discardableResult
    func stop(with signal: Int32) async -> Int32 {
        await finish(with: signal).status
    }

    /// Sends `signal` to the process (unless it has exited) and waits until it has; returns its
    /// status and everything it wrote to stdout and stderr.
    func finish(with signal: Int32) async -> (status: Int32, output: String) {
        if process.isRunning { kill(process.processIdentifier, signal) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        return (process.terminationStatus, output)
    }
}

/// Runs a `notify sink` process for `body`; kills it afterwards if it still runs, also on failure.
func withSinkProcess<T>(_ arguments: [String], _ body: (SinkProcess) async throws -> T) async throws -> T {
    let process = try SinkProcess(arguments: arguments)
    do {
        let result = try await body(process)
        await process.stop(with: SIGKILL)
        return result
    } catch {
        await process.stop(with: SIGKILL)
        throw error
    }
}

extension SinkRuntimeTests {
    @Suite struct SinkProcessRestartTests {
        /// A sink process killed with SIGKILL while one request is in flight, then restarted: what
        /// it reported before the kill is not redelivered (the dedupe comes back from
        /// notify.outcomes, the offsets were not all committed), the interrupted command is, and
        /// nothing is lost or reordered.
        @Test func killedSinkProcessRestartsWithoutDuplicatesOrLosses() async throws {
            let secret = Array("webhook secret".utf8)
            let secretFile = try temporaryFile("secret", contents: secret)
            defer { try? FileManager.default.removeItem(atPath: secretFile) }
            let receiver = WebhookReceiver(secret: secret)
            receiver.ledger.script("d3-2", [.stall(.seconds(3))])
            try await withCertificateAuthority { authority in
                try await receiver.serve(tls: authority, logger: testLogger) { port in
                    try await withSinkTopics { broker in
                        let commands = (1...8).flatMap { deviceCommands($0, count: 5) }
                        try await produceCommands(commands, to: broker)
                        let arguments = [
                            "--kind", "webhook", "--bootstrap", broker.bootstrapServers, "--url",
                            "https://127.0.0.1:\(port)\(WebhookReceiver.path)",
                            "--secret-file", secretFile, "--ca-file", authority.caFile,
                        ]
                        // One attempt at a time: everything before the stalled request is reported.
                        let acceptedBeforeKill = try await withSinkProcess(arguments + ["--max-in-flight", "1"]) {
                            first in
                            try await waitUntil(timeout: .seconds(60)) { receiver.ledger.arrivals(of: "d3-2") == 1 }
                            let accepted = receiver.ledger.count
                            await first.stop(with: SIGKILL)
                            return accepted
                        }
                        try await withSinkProcess(arguments) { second in
                            try await waitUntil(timeout: .seconds(60)) { receiver.ledger.count >= commands.count }
                            try await waitUntilEveryCommandIsCommitted(by: "notify-sink-webhook", on: broker)
                            #expect(await second.stop(with: SIGTERM) == 0)
                        }

                        let accepted = receiver.ledger.received.map(\.commandId)
                        #expect(acceptedBeforeKill > 0 && acceptedBeforeKill < commands.count)
                        #expect(accepted.count == commands.count, "each command accepted once")
                        #expect(Set(accepted) == Set(commands.map(\.id)))
                        #expect(receiver.ledger.arrivals(of: "d3-2") == 2)
                        for device in 1...8 {
                            #expect(
                                accepted.filter { $0.hasPrefix("d\(device)-") } == (0..<5).map { "d\(device)-\($0)" })
                        }
                        let outcomes = try await readOutcomes(on: broker)
                        #expect(outcomes.count == commands.count)
                        #expect(Set(outcomes.map(\.commandId)) == Set(commands.map(\.id)))
                        #expect(outcomes.allSatisfy { $0.outcome == .delivered && $0.sink == "webhook" })
                    }
                }
            }
        }
    }
}
