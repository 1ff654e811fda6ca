import ArgumentParser

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
        ]
    )
}
