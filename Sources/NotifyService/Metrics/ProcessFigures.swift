import Foundation
import Glibc

/// The process's own figures (`process_*`), read from `/proc` at each scrape: a few small reads of
/// kernel memory, no disk.
enum ProcessFigures {
    static func read() -> [FamilySamples] {
        let clockTicks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        var families: [FamilySamples] = []
        if let stat = statFields() {
            // Fields of proc(5) from 14 (utime) on, counted from field 3 (state), the first after the name.
            func field(_ number: Int) -> Double { Double(stat[number - 3]) ?? 0 }
            families.append(FamilySamples(MetricName.processCPU, [([], (field(14) + field(15)) / clockTicks)]))
            families.append(FamilySamples(MetricName.processVirtualMemory, [([], field(23))]))
            families.append(FamilySamples(MetricName.processResidentMemory, [([], field(24) * pageSize)]))
            if let bootTime = bootTime() {
                families.append(FamilySamples(MetricName.processStartTime, [([], bootTime + field(22) / clockTicks)]))
            }
        }
        if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            families.append(FamilySamples(MetricName.processOpenFileDescriptors, [([], Double(open.count))]))
        }
        if let limit = openFilesLimit() {
            families.append(FamilySamples(MetricName.processMaxFileDescriptors, [([], limit)]))
        }
        return families
    }

    /// The fields of `/proc/self/stat` after the command name (which may hold spaces), from field 3 on.
    private static func statFields() -> [Substring]? {
        guard let text = contents(of: "/proc/self/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count >= 22 ? fields : nil
    }

    /// The boot time in seconds since the epoch (`btime` of `/proc/stat`).
    private static func bootTime() -> Double? {
        contents(of: "/proc/stat")?.split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { Double($0.dropFirst("btime ".count)) }
    }

    /// The soft limit of open files (`Max open files` of `/proc/self/limits`).
    private static func openFilesLimit() -> Double? {
        guard
            let line = contents(of: "/proc/self/limits")?.split(separator: "\n").first(where: {
                $0.hasPrefix("Max open files")
            })
        else { return nil }
        return line.dropFirst("Max open files".count).split(separator: " ").first.flatMap { Double($0) }
    }

    /// A `/proc` file's text (their size shows as 0, so they are read to their end).
    private static func contents(of path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }
}
