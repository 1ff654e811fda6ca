import NotifyBuild
import NotifyTestSupport
import Testing

/// `notify --version` names the version and the commit of the build, a commit of this repository.
@Suite struct VersionTests {
    @Test func versionNamesTheCommitItWasBuiltFrom() async throws {
        let notify = try NotifyProcess(["--version"])
        defer { notify.kill() }
        #expect(try await notify.exitStatus() == 0)
        let line = try #require(notify.output.first)
        let match = try #require(
            line.wholeMatch(of: /notify ([0-9]+\.[0-9]+\.[0-9]+) \(commit ([0-9a-f]{40})\)/), "\(line)")
        #expect(String(match.1) == NotifyBuild.version)
        #expect(String(match.2) == NotifyBuild.commit, "the tests and the executable come from one build")
        let git = try await runChildProcess(
            "git", ["-C", repositoryRoot.path, "cat-file", "-e", "\(match.2)^{commit}"])
        #expect(git.status == 0, "\(match.2) is no commit of this repository: \(git.errorText)")
    }
}
