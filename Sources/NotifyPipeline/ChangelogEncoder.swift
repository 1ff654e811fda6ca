import Foundation
import NotifyKafka
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Encodes the changelogs of saves on a thread of its own, at the lowest scheduling priority.
///
/// A save encodes every key its task changed since the last one: at 10,000 messages/s, about a
/// megabyte of JSON every few hundred milliseconds. Encoded on the cooperative pool (two threads on
/// two cores), it held one of its threads from the stages' folds for as long as it took, and the
/// messages folded meanwhile came out late together. Here the kernel gives the cores to the folds
/// first, and the changelog the time left over; a save waits for its changelog in any case (see
/// ``SaveChain``), and the stages wait for the saves when too many are in flight.
final class ChangelogEncoder: Sendable {
    /// The one encoder of the process: its thread lives as long as the process.
    static let shared = ChangelogEncoder()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let queued = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            #if canImport(Glibc)
                // Nice 19 for this thread alone: on Linux each thread has its nice value, and "0"
                // names the calling thread.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            #endif
            while true {
                queued.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job()
            }
        }
        thread.start()
    }

    /// The changelog records of every save in `output` (``TaskOutput/changelogRecords()``).
    func records(of output: TaskOutput) async -> [OutgoingRecord] {
        await run { output.changelogRecords() }
    }

    /// Runs `job` on the encoder's thread, after the jobs queued before it, and returns its result.
    func run<Result: Sendable>(_ job: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            jobs.withLock { $0.append { continuation.resume(returning: job()) } }
            queued.signal()
        }
    }
}
