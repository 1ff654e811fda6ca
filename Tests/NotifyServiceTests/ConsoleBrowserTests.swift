import Foundation
import Logging
import NotifyCore
import NotifyTestSupport
import Testing
@testable import NotifyService

/// Runs Debian's headless Chromium against the console page, as the browser a developer opens.
enum HeadlessChromium {
    struct Missing: Error, CustomStringConvertible {
        var description: String { "chromium not found: run Scripts/setup.sh (apt-get install -y chromium)" }
    }

    struct Failed: Error, CustomStringConvertible {
        var status: Int32
        var standardError: String
        var description: String { "chromium exited with \(status): \(standardError.suffix(2000))" }
    }

    static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs chromium headless with `arguments` and returns its standard output. The process is killed
    /// (by its PID) if it has not finished within `timeout`.
    static func run(_ arguments: [String], timeout: Duration = .seconds(90)) async throws -> String {
        guard let executable else { throw Missing() }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("notify-chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let result = try await runChildProcess(executable, [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--no-first-run", "--user-data-dir=\(profile.path)",
        ] + arguments, timeout: timeout)
        guard result.status == 0 else { throw Failed(status: result.status, standardError: result.errorText) }
        return result.outputText
    }
}

/// Needs Chromium (`Scripts/setup.sh` installs it); without it the test fails, unless the run opted out of
/// browser tests explicitly with NOTIFY_SKIP_BROWSER=1 (as `Scripts/setup.sh` does).
@Suite(
    "Live console in headless Chromium", .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_SKIP_BROWSER"] != "1", "NOTIFY_SKIP_BROWSER=1"))
struct ConsoleBrowserTests {
    @Test("the page renders the flow and each command as an iOS banner and an Android notification")
    func rendersNotifications() async throws {
        let console = ConsoleFeed(actionsByCategory: SampleCommands.actions)
        let shell = ServiceShell(settings: testSettings(), logger: Logger(label: "test"), console: console)
        try await withRunningShell(shell) { shell, port in
            console.publish(.event(topic: "chat.messages", key: "c-hike", type: "message.received", summary: "m-1 from u-alice in c-hike"))
            console.publish(.decision(userId: "u-alice", deviceId: nil, conversationId: "c-hike", messageId: "m-1", reason: "own message"))
            console.publish(.command(SampleCommands.groupImageToIOS))
            console.publish(.command(SampleCommands.directToAndroid))
            console.publish(.command(SampleCommands.badgeClear))
            console.publish(.outcome(NotificationOutcome(
                id: "o-1", at: "2026-11-22T03:00:03Z", commandId: "cmd-ios-1", sink: "apns",
                recipient: SampleCommands.groupImageToIOS.recipient, conversationId: "c-hike", messageId: "m-1", outcome: .delivered)))
            let url = "http://127.0.0.1:\(port)/"

            let dom = try await HeadlessChromium.run(["--timeout=5000", "--dump-dom", url])
            // Counters, the flow, and both previews of each alerting command.
            #expect(dom.contains(#"<b id="count-command">3</b>"#))
            #expect(dom.contains(#"<b id="count-outcome">1</b>"#))
            #expect(dom.contains("no notification for u-alice: own message"))
            #expect(dom.components(separatedBy: #"<div class="ios">"#).count - 1 == 2)
            #expect(dom.components(separatedBy: #"<div class="android">"#).count - 1 == 2)
            #expect(dom.contains(#"<span class="title">Alice Martin</span>"#))
            #expect(dom.contains(#"<div class="subtitle">Weekend hike</div>"#))
            #expect(dom.contains("Summit at last! 🏔"))
            #expect(dom.contains(#"<span class="sender">Alice Martin: </span>"#))
            #expect(dom.contains("<span>Reply</span><span>Mute</span>"))
            #expect(dom.contains("<span>REPLY</span><span>MUTE</span>"))
            #expect(dom.contains("sender identity not resolved"))
            #expect(dom.contains("Background push: nothing shown; badge 0, clears thread c-hike"))
            #expect(dom.contains(#"<span class="tag outcome delivered">delivered</span>"#))
            // Feed text is text, never markup.
            #expect(dom.contains("Are we still on for &lt;b&gt;tonight&lt;/b&gt;?"))
            // The avatar image (a data URL) loaded and replaced the initials.
            #expect(dom.contains(#"<div class="avatar"><img alt="" src="data:image/png;base64"#))
            #expect(dom.contains(#"<div class="avatar"><span>D</span></div>"#))

            let screenshot = FileManager.default.temporaryDirectory.appendingPathComponent("notify-console-\(UUID().uuidString).png")
            defer { if ProcessInfo.processInfo.environment["NOTIFY_KEEP_SCREENSHOT"] == nil { try? FileManager.default.removeItem(at: screenshot) } }
            _ = try await HeadlessChromium.run(["--timeout=5000", "--window-size=1400,1000", "--screenshot=\(screenshot.path)", url])
            let png = try Data(contentsOf: screenshot)
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == 1400 && height == 1000)
            #expect(png.count > 30_000, "screenshot is \(png.count) bytes: an empty page compresses far smaller")
            if ProcessInfo.processInfo.environment["NOTIFY_KEEP_SCREENSHOT"] != nil { print("screenshot: \(screenshot.path)") }
        }
    }
}
