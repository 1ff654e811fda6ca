import ArgumentParser
import NotifySinks

/// `notify sink --kind jsonl`: appends the selected commands to a file, one JSON line each.
/// The smallest kind: copy this file to add one.
struct JSONLSinkOptions: SinkKindOptions {
    @Option(help: "jsonl: the file to append delivered commands to.")
    var out: String?

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> JSONLSink {
        try JSONLSink(path: try context.required(out, "--out"), selection: try shared.selection())
    }
}
