import Foundation

/// The logs of the `notify` processes one test starts, kept in a directory of their own while it
/// runs. When a run differs from render, ``partitionMoves()`` says which partitions each process was
/// given and gave up and where its tasks restored from, beside what the test did and when. (A crash
/// run in CI once gave 207 commands another badge than render's around a takeover, and its output
/// could not say which partitions had moved where.)
struct ProcessLogs {
    /// The directory the logs are written to.
    let directory: URL

    /// The lines ``partitionMoves()`` keeps: `KafkaConsumer`'s assignments (with where each partition
    /// resumes against its end) and revocations, and `StageRunner`'s restores.
    static let moveMarkers = ["Partitions assigned", "Assigned partitions resume", "Partitions revoked", "Restored "]

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("notify-process-logs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Where the process called `label` writes its standard error.
    func path(for label: String) -> String {
        directory.appendingPathComponent("\(label).log").path
    }

    /// Adds a line of the test's own ("first killed with SIGKILL"), stamped as swift-log's
    /// `StreamLogHandler` stamps the processes' lines, to the log called `test`.
    func note(_ text: String) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZ"
        let line = Data("\(formatter.string(from: Date())) test: \(text)\n".utf8)
        let path = path(for: "test")
        if let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(line)
            handle.closeFile()
        } else {
            _ = FileManager.default.createFile(atPath: path, contents: line)
        }
    }

    /// Every line of the logs that tells a partition assigned or revoked or a task restored, and the
    /// test's notes, each led by its log's label, in time order: by the second the lines are stamped
    /// with, each log's own order kept within a second.
    func partitionMoves() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var lines: [(stamp: Substring, order: Int, text: String)] = []
        for file in files.sorted() where file.hasSuffix(".log") {
            let label = file.dropLast(".log".count)
            let text = (try? String(contentsOfFile: directory.appendingPathComponent(file).path, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n")
            where label == "test" || Self.moveMarkers.contains(where: { line.contains($0) }) {
                lines.append((line.prefix(19), lines.count, "\(label): \(line)"))
            }
        }
        return lines.sorted { ($0.stamp, $0.order) < ($1.stamp, $1.order) }.map(\.text)
    }

    /// Prints ``partitionMoves()`` under the name of `run`: what a process test shows when its run
    /// differs from render.
    func printMoves(of run: String) {
        print("\(run): partitions assigned and revoked, tasks restored:\n" + partitionMoves().joined(separator: "\n"))
    }

    /// Deletes the directory and its logs.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
