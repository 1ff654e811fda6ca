import Foundation

/// Unbuffered writes to standard output and standard error, so a reading
/// process sees each line at once.
enum StandardOutput {
    static func writeLine(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func writeErrorLine(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
