import Foundation
import Glibc
import NotifyKafka
import Synchronization
import Testing

@Suite struct EmbeddedBrokerTests {
    /// Apache Kafka turns Nagle's algorithm off on its connections; the mock cluster did not, so an
    /// answer could wait for the client's delayed acknowledgement of the one before (up to 40 ms).
    @Test func acceptedConnectionsHaveNagleOffAlsoAfterTheBrokerComesBack() async throws {
        try await withEmbeddedBroker(topics: [:]) { broker in
            let port = try #require(broker.bootstrapServers.split(separator: ":").last.flatMap { UInt16($0) })
            // The first connection stays open through the outage, as a client's would: see
            // `EmbeddedBroker.setBrokerDown` for why the port must not be left unused.
            let first = try connect(port: port)
            defer { close(first) }
            #expect(try await acceptedConnectionNoDelay(client: first, port: port) == true)

            try await broker.setBrokerDown(1)
            try await broker.setBrokerUp(1)
            let second = try connect(port: port)
            defer { close(second) }
            #expect(try await acceptedConnectionNoDelay(client: second, port: port) == true)
        }
    }

    /// A child process holds a copy of the broker's listening socket from its spawn until its exec
    /// closes it; a broker taken down in that window could not bind its port again, and librdkafka
    /// aborted the whole test process (CI, 2026-11-29). Children started through
    /// `EmbeddedBroker.startingChildProcess` never overlap a broker going down.
    @Test func aBrokerGoesDownAndUpWhileChildProcessesStart() async throws {
        try await withEmbeddedBroker(topics: [:]) { broker in
            let port = try #require(broker.bootstrapServers.split(separator: ":").last.flatMap { UInt16($0) })
            let client = try connect(port: port)  // Keeps the port taken through the outages.
            defer { close(client) }
            let starter = ChildProcessStarter()
            var failure: (any Error)?
            do {
                for _ in 0..<outages {
                    try await broker.setBrokerDown(1)
                    try await broker.setBrokerUp(1)
                }
            } catch { failure = error }
            let started = await starter.stop()
            if let failure { throw failure }
            print("took the broker down \(outages) times while \(started) child processes started")
            #expect(started > 0)
        }
    }

    private let outages = 300

    /// Starts `/bin/true` again and again, through `EmbeddedBroker.startingChildProcess`, on a
    /// thread of its own until stopped.
    private final class ChildProcessStarter: Sendable {
        private final class StopFlag: Sendable {
            let stopped = Mutex(false)
        }
        private let flag = StopFlag()
        private let done: Task<Int, Never>

        init() {
            let flag = flag
            let (finished, finish) = AsyncStream<Int>.makeStream()
            Thread.detachNewThread {
                var started = 0
                while !flag.stopped.withLock({ $0 }) {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/bin/true")
                    guard (try? EmbeddedBroker.startingChildProcess({ try process.run() })) != nil else { break }
                    process.waitUntilExit()
                    started += 1
                }
                finish.yield(started)
                finish.finish()
            }
            done = Task { await finished.first { _ in true } ?? 0 }
        }

        /// Stops starting processes; returns how many started.
        func stop() async -> Int {
            flag.stopped.withLock { $0 = true }
            return await done.value
        }
    }

    /// A socket connected to `port` on loopback.
    private func connect(port: UInt16) throws -> Int32 {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(client >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected != 0 { close(client) }
        try #require(connected == 0)
        return client
    }

    /// Reads `TCP_NODELAY` off the connection the broker (in this process) accepted from `client`,
    /// connected to `port`: nil if it was not accepted within two seconds.
    private func acceptedConnectionNoDelay(client: Int32, port: UInt16) async throws -> Bool? {
        let clientPort = try #require(localPort(of: client, peer: false))
        // The accepted end: bound to the broker's port, its peer the client's port.
        for _ in 0..<200 {
            for descriptor in try openDescriptors() where descriptor != client {
                guard localPort(of: descriptor, peer: false) == port,
                    localPort(of: descriptor, peer: true) == clientPort
                else { continue }
                var noDelay: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                try #require(getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &size) == 0)
                return noDelay != 0
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    private func openDescriptors() throws -> [Int32] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { Int32($0) }
    }

    /// The port of a socket's own address (or its peer's), if it is an IPv4 socket.
    private func localPort(of descriptor: Int32, peer: Bool) -> UInt16? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length)
            }
        }
        guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return UInt16(bigEndian: address.sin_port)
    }
}
