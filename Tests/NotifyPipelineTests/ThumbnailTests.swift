import Kafka
import NotifyCore
import NotifySinkStandIns
import Testing
@testable import NotifyPipeline

@Suite struct ThumbnailResolverTests {
    /// A timeout no answer on a busy test machine runs into, where the test is not about timeouts.
    static let patient = Duration.seconds(10)
    let photo = Attachment(url: "https://cdn.example/p 1.jpg?size=full", mimeType: "image/jpeg", bytes: 3_000_000)

    @Test func asksTheServiceAndTakesItsThumbnail() async throws {
        let service = ThumbnailStandIn(.answers)
        try await service.serve(logger: testLogger) { url in
            let resolver = ThumbnailResolver(settings: ThumbnailSettings(url: url, timeout: Self.patient), client: .shared)
            let thumbnail = try await resolver.thumbnail(of: photo)
            #expect(thumbnail == Attachment(
                url: ThumbnailStandIn.thumbnailURL(of: photo.url), mimeType: "image/jpeg", bytes: ThumbnailStandIn.thumbnailBytes))
        }
        // The attachment URL travelled percent-encoded and arrived intact.
        #expect(service.requestedURLs == [photo.url])
    }

    @Test func aSlowServiceRunsOutOfTime() async throws {
        // Twice the bound below: a busy machine's scheduling cannot blur the difference.
        let service = ThumbnailStandIn(.slow(.seconds(8)))
        try await service.serve(logger: testLogger) { url in
            let resolver = ThumbnailResolver(settings: ThumbnailSettings(url: url, timeout: .milliseconds(300)), client: .shared)
            let started = ContinuousClock.now
            let error = await #expect(throws: ThumbnailLookupError.self) { try await resolver.thumbnail(of: photo) }
            #expect(error?.description == "no answer within 300 ms")
            #expect(ContinuousClock.now - started < .seconds(4))
        }
    }

    @Test func aFailingServiceGivesNoThumbnail() async throws {
        try await ThumbnailStandIn(.fails(status: 503)).serve(logger: testLogger) { url in
            let resolver = ThumbnailResolver(settings: ThumbnailSettings(url: url, timeout: Self.patient), client: .shared)
            let error = await #expect(throws: ThumbnailLookupError.self) { try await resolver.thumbnail(of: photo) }
            #expect(error?.description == "the service answered 503")
        }
    }

    @Test(arguments: [
        (#"not json"#, "the answer is not JSON"),
        (#"{"url":"ftp://x/y.jpg","mimeType":"image/jpeg","bytes":1}"#, "the answer has no http(s) \"url\""),
        (#"{"url":"https://x/y.pdf","mimeType":"application/pdf","bytes":1}"#, "the answer's \"mimeType\" is not an image type"),
        (#"{"url":"https://x/y.jpg","mimeType":"image/jpeg","bytes":-4}"#, "the answer's \"bytes\" is not a size"),
    ])
    func unusableAnswersAreRefusedWithTheReason(answer: String, reason: String) {
        let error = #expect(throws: ThumbnailLookupError.self) { try ThumbnailResolver.attachment(from: Array(answer.utf8)) }
        #expect(error?.description == reason)
    }
}

/// The pipeline with a thumbnail service: Alice sends Bob (one Android phone) two photos of 3 MB,
/// too large for Android's 1 MB, with a text between them.
@Suite(.serialized) struct PipelineThumbnailTests {
    static let messages = [
        Scenario.photo("p1", in: "c1", from: "alice", bytes: 3_000_000, at: 1),
        Scenario.message("t2", in: "c1", from: "alice", "and this", at: 1.1),
        Scenario.photo("p3", in: "c1", from: "alice", bytes: 3_000_000, at: 1.2),
    ]

    /// Runs the scenario with the service behaving as told; the commands in the order Bob's phone gets them.
    func run(_ behaviour: ThumbnailStandIn.Behaviour, backlogLimit: Int64 = 1_000) async throws -> ([NotificationCommand], [String]) {
        // Patient where the service answers (a busy test machine), one second where it is meant to be too slow.
        let timeout: Duration = if case .slow = behaviour { .seconds(1) } else { ThumbnailResolverTests.patient }
        let service = ThumbnailStandIn(behaviour)
        let commands = try await service.serve(logger: testLogger) { url in
            try await withPipelineBroker(partitions: 1) { broker in
                let pipeline = RunningPipeline(broker, configuration: try testCoreConfiguration(),
                                               thumbnails: ThumbnailSettings(url: url, timeout: timeout, backlogLimit: backlogLimit))
                try await pipeline.ready()
                try await produce(Scenario.aliceAndBob, to: broker)
                try await Task.sleep(for: .seconds(1))
                try await produce(Self.messages, to: broker)
                let commands = try await readCommands(from: broker) { $0.count >= 3 }
                try await pipeline.stop()
                return commands
            }
        }
        #expect(commands.map(\.messageId) == ["p1", "t2", "p3"])
        return (commands, service.requestedURLs)
    }

    @Test func photosGoOutWithTheirThumbnails() async throws {
        let (commands, asked) = try await run(.answers)
        #expect(asked == ["https://cdn.example/p1.jpg", "https://cdn.example/p3.jpg"])
        for command in commands where command.messageId != "t2" {
            let thumbnail = ThumbnailStandIn.thumbnailURL(of: "https://cdn.example/\(command.messageId!).jpg")
            #expect(command.content["attachment"]?["url"] == .string(thumbnail))
            // Small enough for Android now: the phone shows the picture.
            #expect(command.fcm?.message["notification"]?["image"] == .string(thumbnail))
        }
    }

    @Test(arguments: [ThumbnailStandIn.Behaviour.slow(.seconds(4)), .fails(status: 500)])
    func aSlowOrFailingServiceDelaysNothingBeyondTheTimeoutAndLosesNothing(_ behaviour: ThumbnailStandIn.Behaviour) async throws {
        let (commands, asked) = try await run(behaviour)
        #expect(asked.count == 2)
        for command in commands where command.messageId != "t2" {
            #expect(command.content["attachment"]?["url"] == .string("https://cdn.example/\(command.messageId!).jpg"))
            // The full-size photo is too large for Android: no picture, the body says what was sent.
            #expect(command.fcm?.message["notification"]?["image"] == nil)
            #expect(command.fcm?.message["notification"]?["body"]?.stringValue?.hasPrefix("Sent a photo") == true)
        }
    }

    @Test func aBackedUpPartitionSkipsTheLookups() async throws {
        let (commands, asked) = try await run(.answers, backlogLimit: 0)
        #expect(asked.isEmpty)
        #expect(commands.allSatisfy { $0.content["attachment"]?["url"]?.stringValue?.hasSuffix(".thumb.jpg") != true })
    }
}
