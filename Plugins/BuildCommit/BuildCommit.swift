import Foundation
import PackagePlugin

/// Generates `BuildCommit.swift` (`let buildCommit = "<commit>"`) for the target that uses it:
/// `NOTIFY_BUILD_COMMIT` when set (builds without `.git`, such as the Docker image's), else what
/// `git rev-parse HEAD` says in the package directory, else `unknown` (a source archive, no git).
///
/// The command's inputs are git's `HEAD` and its log (`logs/HEAD`, appended at every commit,
/// checkout and reset), so it runs again whenever HEAD moves, and only then. Uncommitted changes
/// are not marked: the commit is the one HEAD was at.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("BuildCommit.swift")
        let override = ProcessInfo.processInfo.environment["NOTIFY_BUILD_COMMIT"] ?? ""
        let inputs = Self.gitDirectory(of: package).map { git in
            ["HEAD", "logs/HEAD"].map { git.appendingPathComponent($0) }
                .filter { FileManager.default.fileExists(atPath: $0.path) }
        } ?? []
        return [
            .buildCommand(
                displayName: "Reading the git commit of \(context.package.displayName)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", Self.script, "build-commit", package.path, output.path, override],
                inputFiles: inputs,
                outputFiles: [output]),
        ]
    }

    /// The repository's git directory: `.git`, or where a `.git` file points (a worktree, a submodule).
    static func gitDirectory(of package: URL) -> URL? {
        let dotGit = package.appendingPathComponent(".git")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isDirectory) else { return nil }
        if isDirectory.boolValue { return dotGit }
        guard let text = try? String(contentsOf: dotGit, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("gitdir: ") }) else { return nil }
        let path = String(line.dropFirst("gitdir: ".count))
        return path.hasPrefix("/") ? URL(fileURLWithPath: path) : package.appendingPathComponent(path)
    }

    /// `$1`: the package directory; `$2`: the Swift file to write; `$3`: the commit to use, if not empty.
    static let script = #"""
        commit="$3"
        if [ -z "$commit" ]; then commit=$(git -C "$1" rev-parse HEAD 2>/dev/null) || commit=unknown; fi
        printf '/// The git commit this executable was built from (see Plugins/BuildCommit).\nlet buildCommit = "%s"\n' \
            "$commit" > "$2"
        """#
}
