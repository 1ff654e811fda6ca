import ArgumentParser
import Foundation
import NotifyCore

/// `notify-bench builder --count N`: decodes N `message.received` values,
/// folds them through both stages of the core with 50,000 known identities,
/// and renders each message for one recipient on three devices (APNs, FCM,
/// local; `--devices` takes fewer), encoding every command to its bytes. One core, one thread.
struct BuilderBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "builder",
        abstract:
            "Decode, fold and render N messages (APNs + FCM + local for one recipient each, or fewer with --devices)."
    )

    @Option(help: "How many message events.")
    var count = 200_000

    @Option(help: "How many known identities.")
    var identities = 50_000

    @Option(
        help:
            "Devices per recipient, 1 to 3: an iPhone (APNs), then an Android phone (FCM), then an iPad in the foreground (local)."
    )
    var devices = 3

    /// How far each message goes, to see where the time is spent.
    enum Phase: String, ExpressibleByArgument, CaseIterable {
        case decode, fanout, route, encode
    }

    @Option(
        help: "Stop each message after this phase: decode, fanout, route (commands built) or encode (the full figure).")
    var through = Phase.encode

    @Option(help: ArgumentHelp("The Schemas directory (env NOTIFY_SCHEMAS).", valueName: "dir"))
    var schemas = ProcessInfo.processInfo.environment["NOTIFY_SCHEMAS"] ?? "Schemas"

    func validate() throws {
        guard (1...3).contains(devices) else { throw ValidationError("--devices wants 1, 2 or 3") }
    }

    func run() throws {
        let configuration = try CoreConfiguration.load(schemasDirectory: schemas)
        let fanout = FanoutStage(configuration: configuration)
        let route = RouteStage(configuration: configuration)
        var fanoutState = FanoutState()
        var routeState = RouteState()
        let start = EventTime(rfc3339: "2026-11-22T00:00:00Z")!
        let recipients = 1_000

        // Setup (not timed): identities, one direct conversation per recipient and sender pair, devices.
        for index in 0..<identities {
            _ = fanout.fold(
                &fanoutState,
                .identityUpdated(
                    IdentityUpdated(
                        id: "i\(index)", at: start, userId: "u\(index)", displayName: "User \(index) 山田",
                        handle: "user\(index)", imageURL: "https://cdn.example/u/\(index).png")))
        }
        for recipient in 0..<recipients {
            let userId = "u\(recipient)"
            _ = fanout.fold(
                &fanoutState,
                .conversation(
                    ConversationUpdated(
                        id: "c\(recipient)", at: start, conversationId: "dm-\(recipient)", kind: .direct,
                        members: [userId, "u\(identities - 1 - recipient)"])))
            _ = route.fold(
                &routeState,
                .devices(
                    DevicesUpdated(
                        id: "d\(recipient)", at: start, userId: userId,
                        devices: Array(
                            [
                                Device(
                                    deviceId: "\(userId)-iphone", platform: .ios, provider: .apns,
                                    token: String(repeating: "a1", count: 32), appId: "com.example.chat"),
                                Device(
                                    deviceId: "\(userId)-pixel", platform: .android, provider: .fcm,
                                    token: String(repeating: "f", count: 150), appId: "com.example.chat"),
                                Device(
                                    deviceId: "\(userId)-ipad", platform: .ios, provider: .apns,
                                    token: String(repeating: "b2", count: 32), appId: "com.example.chat"),
                            ].prefix(devices)))))
            if devices == 3 {
                _ = route.fold(
                    &routeState,
                    .clientState(
                        ClientStateChanged(
                            id: "s\(recipient)", at: start, userId: userId, deviceId: "\(userId)-ipad",
                            state: .foreground,
                            screen: .init(kind: .settings))))
            }
        }
        let values: [[UInt8]] = (0..<count).map { index in
            let recipient = index % recipients
            let message = MessageReceived(
                id: "e\(index)", at: start.adding(milliseconds: Int64(index)), messageId: "m\(index)",
                conversationId: "dm-\(recipient)", senderId: "u\(identities - 1 - recipient)", kind: .text,
                text: "Are we still on for Saturday? 土曜日の予定は大丈夫？ 🏔️ #\(index)")
            return CoreJSON.encode(message)
        }

        // Timed: decode, fold through both stages, render and encode every command.
        let through = through  // an @Option read in the loop would cost a property-wrapper lookup per message
        var notifications = 0
        var commands = 0
        var bytes = 0
        let clock = ContinuousClock()
        let cpuBefore = ProcessCPUClock.seconds()
        let elapsed = try clock.measure {
            for value in values {
                guard case .message(let message) = try InputEvent.decode(topic: Topic.messages, value: value) else {
                    continue
                }
                guard through != .decode else {
                    notifications += 1
                    continue
                }
                let output = fanout.fold(&fanoutState, .message(message))
                for record in output.records {
                    notifications += 1
                    guard through != .fanout else { continue }
                    for command in route.fold(&routeState, .fanout(record)).commands {
                        commands += 1
                        if through == .encode { bytes += CoreJSON.encode(command).count }
                    }
                }
            }
        }
        let cpu = ProcessCPUClock.seconds() - cpuBefore
        let seconds = elapsed.seconds
        print(
            "builder: \(notifications) notifications in \(String(format: "%.3f", seconds)) s = \(Int(Double(notifications) / seconds)) notifications/s"
                + " (CPU \(String(format: "%.3f", cpu)) s = \(Int(Double(notifications) / cpu)) per CPU-second; \(commands) commands, \(bytes / max(commands, 1)) bytes each)"
        )
    }
}
