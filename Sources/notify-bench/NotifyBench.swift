import ArgumentParser
import Foundation

/// `notify-bench`: the benchmarks behind the figures the issues ask for.
/// Each subcommand prints one summary line; none is a test.
@main
struct NotifyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify-bench",
        abstract: "Benchmarks for notify: run them on a quiet machine and compare ratios, not absolute figures.",
        subcommands: [
            PassthroughBenchmark.self,
            PipelineBenchmark.self,
            SeedBenchmarkInput.self,
            BuilderBenchmark.self,
            SinkBenchmark.self,
            LedgerRestoreBenchmark.self,
            PartitionCheckBenchmark.self,
        ]
    )
}

/// CPU time of this process, all threads: on a shared machine the wall clock also counts other people's work.
enum ProcessCPUClock {
    static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The value below which a share `p` of `sorted` (ascending, not empty) lies.
func percentile<Value>(_ sorted: [Value], _ p: Double) -> Value {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}
