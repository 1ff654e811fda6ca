import Glibc
import NotifyCore
import NotifyKafka
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
            let resolver = ThumbnailResolver(
                settings: ThumbnailSettings(url: url, timeout: Self.patient), client: .shared)
            let thumbnail = try await resolver.thumbnail(of: photo)
            #expect(
                thumbnail
                    == Attachment(
                        url: ThumbnailStandIn.thumbnailURL(of: photo.url), mimeType: "image/jpeg",
                        bytes: ThumbnailStandIn.thumbnailBytes))
        }
        // The attachment URL travelled percent-encoded and arrived intact.
        #expect(service.requestedURLs == [photo.url])
    }

    @Test func aSlowServiceRunsOutOfTime() async throws {
        let service = ThumbnailStandIn(.slow(.seconds(8)))
        try await service.serve(logger: testLogger) { url in
            let resolver = ThumbnailResolver(
                settings: ThumbnailSettings(url: url, timeout: .milliseconds(300)), client: .shared)
            let error = await #expect(throws: ThumbnailLookupError.self) { try await resolver.thumbnail(of: photo) }
            #expect(error?.description == "no answer within 300 ms")
            // The wait ended before the answer was given (no bound on the wall clock, which a
            // machine busy with the tests beside this one stretches).
            #expect(service.requestedURLs == [photo.url])
            #expect(service.answerCount == 0)
        }
    }

    @Test func aServiceThatTakesNoConnectionRunsOutOfTime() async throws {
        // The deadline passes while the client is still connecting: the same answer as a slow reply.
        try await withUnacceptingListener { url in
            let resolver = ThumbnailResolver(
                settings: ThumbnailSettings(url: url, timeout: .milliseconds(300)), client: .shared)
            let error = await #expect(throws: ThumbnailLookupError.self) { try await resolver.thumbnail(of: photo) }
            #expect(error?.description == "no answer within 300 ms")
        }
    }

    @Test func aFailingServiceGivesNoThumbnail() async throws {
        try await ThumbnailStandIn(.fails(status: 503)).serve(logger: testLogger) { url in
            let resolver = ThumbnailResolver(
                settings: ThumbnailSettings(url: url, timeout: Self.patient), client: .shared)
            let error = await #expect(throws: ThumbnailLookupError.self) { try await resolver.thumbnail(of: photo) }
            #expect(error?.description == "the service answered 503")
        }
    }

    /// The lookups of a batch run at once: five photos whose answers each take three seconds are
    /// all asked about together, and each gets its thumbnail.
    @Test func theLookupsOfABatchRunAtOnce() async throws {
        let service = ThumbnailStandIn(.slow(.seconds(3)))
        let ids = (1...5).map { "p\($0)" }
        let batch = ids.enumerated().map { offset, id in
            let message = Scenario.photo(id, in: "c1", from: "alice", bytes: 3_000_000, at: Double(offset))
            return KafkaRecord(
                topic: Topic.messages, partition: 0, offset: Int64(offset), key: Array("c1".utf8),
                value: Array(message.json.utf8))
        }
        let thumbnailed = try await service.serve(logger: testLogger) { url in
            await MessageThumbnails(settings: ThumbnailSettings(url: url, timeout: Self.patient), logger: testLogger)
                .apply(to: batch, lag: [:])
        }
        #expect(service.mostConcurrentRequests == ids.count)
        #expect(thumbnailed.count == ids.count)
        for (record, id) in zip(thumbnailed, ids) {
            guard case .message(let message) = try InputEvent.decode(topic: record.topic, value: record.value) else {
                Issue.record("not a message: \(record)")
                continue
            }
            #expect(message.attachment?.url == ThumbnailStandIn.thumbnailURL(of: "https://cdn.example/\(id).jpg"))
        }
    }

    @Test(arguments: [
        (#"not json"#, "the answer is not JSON"),
        (#"{"url":"ftp://x/y.jpg","mimeType":"image/jpeg","bytes":1}"#, "the answer has no http(s) \"url\""),
        (
            #"{"url":"https://x/y.pdf","mimeType":"application/pdf","bytes":1}"#,
            "the answer's \"mimeType\" is not an image type"
        ),
        (#"{"url":"https://x/y.jpg","mimeType":"image/jpeg","bytes":-4}"#, "the answer's \"bytes\" is not a size"),
    ])
    func unusableAnswersAreRefusedWithTheReason(answer: String, reason: String) {
        let error = #expect(throws: ThumbnailLookupError.self) {
            try ThumbnailResolver.attachment(from: Array(answer.utf8))
        }
        #expect(error?.description == reason)
    }
}

/// Runs `body` with the URL of a port on 127.0.0.1 whose listener never accepts and whose
/// backlog is full, so the kernel drops new connection attempts and a client's connect hangs.
private func withUnacceptingListener(_ body: (String) async throws -> Void) async throws {
    func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
    func withSocketAddress<T>(_ address: sockaddr_in, _ call: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var sockets = [listener]
    defer { for socket in sockets { _ = close(socket) } }
    var bound = loopback(port: 0)
    try #require(withSocketAddress(bound) { bind(listener, $0, $1) } == 0)
    try #require(listen(listener, 0) == 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try #require(
        withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        } == 0)
    let port = UInt16(bigEndian: bound.sin_port)
    // A backlog of 0 holds one finished handshake; two more connections fill it for certain.
    for _ in 0..<2 {
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        sockets.append(filler)
        _ = withSocketAddress(loopback(port: port)) { connect(filler, $0, $1) }
    }
    // The first filler's handshake is done (its socket turns writable): the backlog is taken.
    var first = pollfd(fd: sockets[1], events: Int16(POLLOUT), revents: 0)
    try #require(poll(&first, 1, 10_000) == 1, "the first connection did not complete")
    try await body("http://127.0.0.1:\(port)\(ThumbnailStandIn.path)")
}

/// The pipeline with a thumbnail service: Alice sends Bob (one Android phone) two photos of 3 MB,
/// too large for Android's 1 MB, with a text between them.
@Suite(.serialized) struct PipelineThumbnailTests {
    static let messages = [
        Scenario.photo("p1", in: "c1", from: "alice", bytes: 3_000_000, at: 1),
        Scenario.message("t2", in: "c1", from: "alice", "and this", at: 1.1),
        Scenario.photo("p3", in: "c1", from: "alice", bytes: 3_000_000, at: 1.2),
    ]

    /// Runs the scenario with the service behaving as told; the commands in the order Bob's phone
    /// gets them, the URLs the service was asked about, and how many thumbnails it had handed out
    /// when the commands were all out.
    func run(
        _ behaviour: ThumbnailStandIn.Behaviour, backlogLimit: Int64 = 1_000
    ) async throws -> (commands: [NotificationCommand], asked: [String], answeredBefore: Int) {
        // Patient where the service answers (a busy test machine), one second where it is meant to be too slow.
        let timeout: Duration = if case .slow = behaviour { .seconds(1) } else { ThumbnailResolverTests.patient }
        let service = ThumbnailStandIn(behaviour)
        let (commands, answeredBefore) = try await service.serve(logger: testLogger) { url in
            try await withPipelineBroker(partitions: 1) { broker in
                let positions = ReadPositions()
                let pipeline = RunningPipeline(
                    broker, configuration: try testCoreConfiguration(),
                    thumbnails: ThumbnailSettings(url: url, timeout: timeout, backlogLimit: backlogLimit),
                    observer: positions.observer)
                try await pipeline.ready()
                try await produce(Scenario.aliceAndBob, to: broker)
                try await positions.waitUntilRead([Topic.conversations, Topic.devices], on: broker)
                try await produce(Self.messages, to: broker)
                let commands = try await readCommands(from: broker) { $0.count >= 3 }
                let answeredBefore = service.answerCount
                try await pipeline.stop()
                return (commands, answeredBefore)
            }
        }
        #expect(commands.map(\.messageId) == ["p1", "t2", "p3"])
        return (commands, service.requestedURLs, answeredBefore)
    }

    @Test func photosGoOutWithTheirThumbnails() async throws {
        let (commands, asked, _) = try await run(.answers)
        #expect(asked == ["https://cdn.example/p1.jpg", "https://cdn.example/p3.jpg"])
        for command in commands where command.messageId != "t2" {
            let thumbnail = ThumbnailStandIn.thumbnailURL(of: "https://cdn.example/\(command.messageId!).jpg")
            #expect(command.content["attachment"]?["url"] == .string(thumbnail))
            // Small enough for Android now: the phone shows the picture.
            #expect(command.fcm?.message["notification"]?["image"] == .string(thumbnail))
        }
    }

    @Test(arguments: [ThumbnailStandIn.Behaviour.slow(.seconds(6)), .fails(status: 500)])
    func aSlowOrFailingServiceDelaysNothingBeyondTheTimeoutAndLosesNothing(_ behaviour: ThumbnailStandIn.Behaviour)
        async throws
    {
        let (commands, asked, answeredBefore) = try await run(behaviour)
        #expect(asked.count == 2)
        // Out before the slow service answered (it answers after 6 s, the lookups give up after 1 s):
        // nothing waited for it beyond the timeout.
        #expect(answeredBefore == 0)
        for command in commands where command.messageId != "t2" {
            #expect(command.content["attachment"]?["url"] == .string("https://cdn.example/\(command.messageId!).jpg"))
            // The full-size photo is too large for Android: no picture, the body says what was sent.
            #expect(command.fcm?.message["notification"]?["image"] == nil)
            #expect(command.fcm?.message["notification"]?["body"]?.stringValue?.hasPrefix("Sent a photo") == true)
        }
    }

    @Test func aBackedUpPartitionSkipsTheLookups() async throws {
        let (commands, asked, _) = try await run(.answers, backlogLimit: 0)
        #expect(asked.isEmpty)
        #expect(commands.allSatisfy { $0.content["attachment"]?["url"]?.stringValue?.hasSuffix(".thumb.jpg") != true })
    }
}
