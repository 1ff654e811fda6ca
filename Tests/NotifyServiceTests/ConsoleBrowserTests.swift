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
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Runs chromium headless with `arguments` and returns its standard output. The process is killed
    /// (by its PID) if it has not finished within `timeout`.
    static func run(_ arguments: [String], timeout: Duration = .seconds(90)) async throws -> String {
        guard let executable else { throw Missing() }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "notify-chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let result = try await runChildProcess(
            executable,
            [
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
            console.publish(
                .event(
                    topic: "chat.messages", key: "c-hike", type: "message.received",
                    summary: "m-1 from u-alice in c-hike"))
            console.publish(
                .decision(
                    userId: "u-alice", deviceId: nil, conversationId: "c-hike", messageId: "m-1", reason: "own message")
            )
            console.publish(.command(SampleCommands.groupImageToIOS))
            console.publish(.command(SampleCommands.directToAndroid))
            console.publish(.command(SampleCommands.badgeClear))
            console.publish(
                .outcome(
                    NotificationOutcome(
                        id: "o-1", at: "2026-11-22T03:00:03Z", commandId: "cmd-ios-1", sink: "apns",
                        recipient: SampleCommands.groupImageToIOS.recipient, conversationId: "c-hike", messageId: "m-1",
                        outcome: .delivered)))
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
            // Times are the commands' event times, not "now".
            #expect(dom.contains(#"<span class="when">"#) && !dom.contains(#"<span class="when">now</span>"#))
        }
    }

    /// The demo's story as `notify dev` feeds it (records as the stages read them, commands, decisions):
    /// each message's card carries its own outcome, suppression or fallback; identity changes show in
    /// the flow. The screenshot is kept as a test artifact.
    @Test("each message card shows its decision, its outcome and a local-to-push fallback")
    func cardsShowOutcomesDecisionsAndFallbacks() async throws {
        let console = ConsoleFeed(actionsByCategory: SampleCommands.actions)
        let shell = ServiceShell(settings: testSettings(), logger: Logger(label: "test"), console: console)
        let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        try await withRunningShell(shell) { shell, port in
            func record(_ topic: String, _ json: String, traceparent: String? = nil) {
                console.publish(.record(topic: topic, key: nil, value: Array(json.utf8), traceparent: traceparent))
            }
            record(
                "chat.identities",
                #"{"type":"identity.updated","id":"e-0","at":"2026-11-22T03:00:00Z","userId":"u-bob","displayName":"Bob 山田"}"#
            )
            // m-1: delivered to Bob's iPhone; Alice's own message suppressed.
            record(
                "chat.messages",
                #"{"type":"message.received","id":"e-1","at":"2026-11-22T03:00:00Z","messageId":"m-1","conversationId":"c-hike","senderId":"u-alice","kind":"image","text":"Summit at last!"}"#,
                traceparent: trace)
            console.publish(
                .decision(
                    userId: "u-alice", deviceId: "d-alice-phone", conversationId: "c-hike", messageId: "m-1",
                    reason: "own message", at: "2026-11-22T03:00:00Z"))
            console.publish(.command(SampleCommands.groupImageToIOS))
            record("notify.outcomes", Self.outcome(SampleCommands.groupImageToIOS, .delivered), traceparent: trace)
            // m-2: local to Carol's phone, which did not take it; the push that followed.
            var local = SampleCommands.directToAndroid
            local.id = "cmd-local-2"
            local.path = .local
            local.fcm = nil
            console.publish(.command(local))
            record("notify.outcomes", Self.outcome(local, .undeliverableLocal, reason: "not-connected"))
            console.publish(.command(SampleCommands.directToAndroid))
            record("notify.outcomes", Self.outcome(SampleCommands.directToAndroid, .delivered))
            let url = "http://127.0.0.1:\(port)/"

            let dom = try await HeadlessChromium.run(["--timeout=5000", "--dump-dom", url])
            let first = try #require(Self.card("message m-1", in: dom))
            #expect(
                first.contains(
                    #"data-command-id="cmd-ios-1" data-user="u-bob" data-device="d-bob-iphone" data-path="push" data-outcome="delivered""#
                ))
            #expect(first.contains(#"<span class="tag outcome delivered">delivered</span>"#))
            #expect(first.contains("no notification for u-alice / d-alice-phone: own message"))
            #expect(first.contains("trace 4bf92f3577b34da6a3ce929d0e0e4736"))
            #expect(first.contains("u-alice in c-hike (image): “Summit at last!”"))
            #expect(!first.contains("fallback:") && !first.contains("a push follows"))
            let second = try #require(Self.card("message m-2", in: dom))
            #expect(
                second.contains(
                    #"data-command-id="cmd-local-2" data-user="u-carol" data-device="d-carol-pixel" data-path="local" data-outcome="undeliverable-local""#
                ))
            #expect(
                second.contains(
                    #"<span class="tag outcome undeliverable-local">undeliverable-local (not-connected)</span>"#))
            #expect(second.contains("the app did not take it (not-connected): a push follows"))
            #expect(
                second.contains(
                    #"data-command-id="cmd-android-1" data-user="u-carol" data-device="d-carol-pixel" data-path="push" data-outcome="delivered""#
                ))
            #expect(second.contains("fallback: sent as a push after local was undeliverable (not-connected)"))
            #expect(!second.contains("own message"))
            #expect(dom.contains(#"<b id="count-outcome">3</b>"#))
            #expect(dom.contains("identity.updated: u-bob is “Bob 山田”"))

            let screenshot = try Self.artifact("console.png")
            _ = try await HeadlessChromium.run([
                "--timeout=5000", "--window-size=1400,1000", "--screenshot=\(screenshot.path)", url,
            ])
            let png = try Data(contentsOf: screenshot)
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == 1400 && height == 1000)
            #expect(png.count > 30_000, "screenshot is \(png.count) bytes: an empty page compresses far smaller")
            print("console screenshot: \(screenshot.path)")
        }
    }

    /// The outcome record a sink would write for `command`.
    static func outcome(_ command: NotificationCommand, _ kind: NotificationOutcome.Kind, reason: String? = nil)
        -> String
    {
        let outcome = NotificationOutcome(
            id: "o-\(command.id)", at: "2026-11-22T03:00:05Z", commandId: command.id,
            sink: command.path == .local ? "inapp" : "apns",
            recipient: command.recipient, conversationId: command.conversationId, messageId: command.messageId,
            outcome: kind, reason: reason)
        return String(decoding: try! JSONEncoder().encode(outcome), as: UTF8.self)
    }

    /// The markup of the card `key` in a dumped page: from its opening tag to the next card's, or to the
    /// end of its column.
    static func card(_ key: String, in dom: String) -> String? {
        guard let start = dom.range(of: #"<div class="card" data-card="\#(key)">"#) else { return nil }
        let rest = dom[start.upperBound...]
        let end =
            rest.range(of: #"<div class="card" data-card=""#)?.lowerBound ?? rest.range(of: "</section>")?.lowerBound
            ?? rest.endIndex
        return String(rest[..<end])
    }

    /// A file under `.build/test-artifacts/` of the repository, its directory created.
    static func artifact(_ name: String) throws -> URL {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name)
    }
}
