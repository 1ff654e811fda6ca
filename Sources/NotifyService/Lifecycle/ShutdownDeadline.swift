import Dispatch
import Foundation
import Logging
import NotifyCore
import UnixSignals

/// Ends a shutdown that cannot finish, and says why: once a shell's graceful shutdown starts, the
/// process exits with status 1 when `shutdown.gracePeriod` has passed, and with 128 plus the signal's
/// number at a second SIGINT or SIGTERM.
///
/// A shutdown commits offsets and waits for its records' acknowledgements; with the Kafka cluster
/// gone, neither comes. ServiceGroup's own last resort is a `fatalError` once cancelling outlasts its
/// allowance: a crash report whose backtrace took 4 s to print, and the group listens for the
/// first signal only, so a second one was ignored. The timer and the signals are Dispatch's, on a
/// queue of their own: they fire even when every thread of the cooperative pool is stuck.
final class ShutdownDeadline: @unchecked Sendable {
    private let gracePeriod: Duration
    private let signals: [UnixSignal]
    private let logger: Logger
    private let queue = DispatchQueue(label: "notify.shutdown-deadline")
    /// Guards the fields below.
    private let lock = NSLock()
    private var armed = false
    private var disarmed = false
    private var timer: DispatchWorkItem?
    private var signalSources: [DispatchSourceSignal] = []
    /// The signal sources not registered with the system yet (see ``arm()``).
    private var unregisteredSources = 0

    /// - Parameters:
    ///   - gracePeriod: from the start of the shutdown to the exit.
    ///   - signals: the signals that started it (a second one ends the process at once).
    init(gracePeriod: Duration, signals: [UnixSignal], logger: Logger) {
        self.gracePeriod = gracePeriod
        self.signals = signals
        self.logger = logger
    }

    /// Starts the clock, once: the shutdown has begun.
    func arm() {
        lock.lock()
        defer { lock.unlock() }
        guard !armed, !disarmed else { return }
        armed = true
        let seconds = gracePeriod.secondsText
        let names = signals.map(\.description).joined(separator: " or ")
        let again = signals.isEmpty ? "" : "; \(names) again stops it at once"
        let announcement: Logger.Message = "Shutting down: at most \(seconds) s (shutdown.gracePeriod)\(again)"
        if signals.isEmpty { logger.info(announcement) }
        let timer = DispatchWorkItem { [self] in
            exit(
                status: 1,
                "shutdown did not finish within shutdown.gracePeriod (\(seconds) s): exiting without it; what was not committed is read again at the next start"
            )
        }
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(gracePeriod.milliseconds)), execute: timer)
        self.timer = timer
        // No `signal(_, SIG_IGN)` first: on Linux, Dispatch delivers signals through a handler of its
        // own, installed when the group's source was made, and ignoring the signal would remove it.
        // The shutdown is announced once every source is registered: a source registers on its queue
        // after `resume()`, and a second signal sent on seeing the line before then can reach only
        // the group's source, which ignores it (the likely cause of a test's second SIGTERM left
        // unheeded in CI on a loaded host, 2026-12-06).
        unregisteredSources = signals.count
        signalSources = signals.map { signal in
            let source = DispatchSource.makeSignalSource(signal: signal.rawValue, queue: queue)
            source.setEventHandler { [self] in
                exit(
                    status: 128 + signal.rawValue,
                    "\(signal) again during shutdown: exiting now, without finishing it; what was not committed is read again at the next start"
                )
            }
            source.setRegistrationHandler { [self] in
                if sourceRegistered() { logger.info(announcement) }
            }
            source.resume()
            return source
        }
    }

    /// Counts a signal source registered; whether it was the last one while the deadline is armed.
    private func sourceRegistered() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        unregisteredSources -= 1
        return unregisteredSources == 0 && !disarmed
    }

    /// Stops the clock: the shutdown finished, and the process (a test's, say) goes on.
    func disarm() {
        lock.lock()
        defer { lock.unlock() }
        disarmed = true
        timer?.cancel()
        for source in signalSources { source.cancel() }
        signalSources = []
    }

    /// Says why, then ends the process at once: `exit` would run the libraries' teardown while
    /// their threads (librdkafka's among them) still run.
    private func exit(status: Int32, _ reason: String) {
        lock.lock()
        let stillArmed = !disarmed
        lock.unlock()
        guard stillArmed else { return }
        logger.error("\(reason)")
        fflush(nil)  // Every output stream: the log writes its lines itself.
        _exit(status)
    }
}
