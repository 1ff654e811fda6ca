import Foundation
import NotifyCore
import NotifyKafka
import NotifySinkStandIns
import NotifySinks
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension SinkRuntimeTests.SinkProcessRestartTests {
    /// An APNs sink process killed with SIGKILL three times under load, then run to the end,
    /// against a stand-in that accepts each notification 300 ms before it answers 200 (so every
    /// kill leaves notifications on devices that the sink never heard were delivered): no command
    /// is lost, every copy on a device carries the command's replacement key, and every command
    /// a device got twice was sent the second time as a replacement of an attempt the sink had
    /// recorded (its `delivered` outcome says `replacement`).
    @Test func apnsSinkKilledRepeatedlyUnderLoadShowsEveryCommandOnce() async throws {
        let fixture = APNsFixture()
        let keyFile = try temporaryFile("key.p8", contents: Array(fixture.key.pemRepresentation.utf8))
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        let apns = fixture.standIn()
        let devices = 40
        let perDevice = 10
        let commands = (1...devices).flatMap { deviceCommands($0, count: perDevice) }
        for device in 1...devices {
            apns.ledger.script(
                String(format: "%04x", device), Array(repeating: .acceptThenHold(.milliseconds(300)), count: perDevice))
        }
        try await withCertificateAuthority { authority in
            try await apns.serve(tls: authority, logger: testLogger) { port in
                try await withSinkTopics { broker in
                    try await produceCommands(commands, to: broker)
                    let arguments = [
                        "--kind", "apns", "--bootstrap", broker.bootstrapServers, "--endpoint",
                        "https://127.0.0.1:\(port)",
                        "--key-file", keyFile, "--key-id", fixture.keyId, "--team-id", fixture.teamId, "--ca-file",
                        authority.caFile,
                    ]
                    var acceptedAtKills: [Int] = []
                    for threshold in [40, 140, 240] {
                        try await withSinkProcess(arguments) { process in
                            try await waitUntil(timeout: .seconds(60)) { apns.ledger.count >= threshold }
                            await process.stop(with: SIGKILL)
                            acceptedAtKills.append(apns.ledger.count)
                        }
                    }
                    try await withSinkProcess(arguments) { last in
                        try await waitUntil(timeout: .seconds(120)) {
                            try await Set(readOutcomes(on: broker).map(\.commandId)).count >= commands.count
                        }
                        #expect(await last.stop(with: SIGTERM) == 0)
                    }

                    let copies = Dictionary(
                        grouping: apns.ledger.received, by: { $0.headers["apns-collapse-id"] ?? "" })
                    #expect(copies[""] == nil, "every notification carries a replacement key")
                    #expect(Set(copies.keys) == Set(commands.map(\.id)), "no command lost")
                    let outcomes = try await readOutcomes(on: broker)
                    let delivered = Dictionary(grouping: outcomes.filter { $0.outcome == .delivered }, by: \.commandId)
                    #expect(Set(delivered.keys) == Set(commands.map(\.id)))
                    let twice = copies.filter { $0.value.count > 1 }.map(\.key).sorted()
                    for id in twice {
                        #expect(
                            delivered[id]?.contains { $0.reason == "replacement" } == true,
                            "\(id) reached its device twice, not as a replacement")
                    }
                    let replacements = outcomes.filter { $0.reason == "replacement" }.count
                    print(
                        "killed at \(acceptedAtKills) accepted notifications; \(apns.ledger.count) accepted for \(commands.count) commands; \(twice.count) on a device twice, each as a replacement; \(replacements) replacements reported"
                    )
                    #expect(!twice.isEmpty, "the kills should have left commands delivered but not reported")
                }
            }
        }
    }
}
