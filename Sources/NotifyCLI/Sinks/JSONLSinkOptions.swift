import ArgumentParser
import NotifySinks

/// `notify sink --kind jsonl`: appends the selected commands to a file, one JSON line each.
/// The smallest kind: copy this file to add one.
struct JSONLSinkOptions: SinkKindOptions {
    @Option(help: "jsonl: the file to append delivered commands to.")
    var out: String?

    var settingFlags: [(key: String, flag: String, value: String?)] { [("sink.jsonl.out", "--out", out)] }

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> JSONLSink {
        try JSONLSink(
            path: try context.required(context.settings.sink.jsonlOut, "--out", setting: "sink.jsonl.out"),
            selection: try shared.selection())
    }
}
