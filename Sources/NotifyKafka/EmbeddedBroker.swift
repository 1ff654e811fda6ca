import CRdkafka
import Glibc
import Logging
import Synchronization

/// A Kafka-protocol cluster in this process: librdkafka's mock cluster.
///
/// It speaks the real protocol over TCP on 127.0.0.1, runs consumer groups,
/// and can inject faults. Its limits, which make it a tool for development and
/// tests only: data lives in memory, at most about 5 MB or 100,000 batches per
/// partition (the oldest are dropped); no compaction; TxnOffsetCommit is not
/// honoured, so transactions cannot be proven on it; offset commits are refused
/// while a group rebalances (Apache Kafka takes them from the current generation),
/// so commits made on revoke can be lost and the next owner re-reads; a fetch that finds no data
/// waits out its whole `fetch.wait.max.ms` even if data arrives meanwhile (clients
/// should use ``clientProperties``). Its connections have Nagle's algorithm turned off, as Apache
/// Kafka's do (the mock leaves it on; see `disableNagleOnListeners`). Production runs on Apache Kafka.
public final class EmbeddedBroker: Sendable {
    private let host: NativeHandle
    private let cluster: NativeHandle
    private let context: ClientContext
    private let blockingCalls = BlockingCallQueue(label: "notify.kafka.embedded-broker")
    /// Broker ids, 1...brokers.
    public let brokerIds: ClosedRange<Int32>
    /// `HOST:PORT,...` for clients.
    public let bootstrapServers: String

    public init(brokers: Int = 1, logger: Logger) throws {
        precondition(brokers >= 1, "an embedded cluster has at least one broker")
        context = ClientContext(logger: logger)
        // The host handle only carries the cluster: its own warnings (no bootstrap servers) are noise.
        let native = try NativeConfiguration(["log_level": "3"])
        try native.install(context)
        host = NativeHandle(pointer: try makeNativeClient(type: RD_KAFKA_PRODUCER, configuration: native))
        guard let cluster = rd_kafka_mock_cluster_new(host.pointer, Int32(brokers)) else {
            rd_kafka_destroy(host.pointer)
            throw KafkaError.client("could not start the embedded broker")
        }
        self.cluster = NativeHandle(pointer: cluster)
        brokerIds = 1...Int32(brokers)
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        disableNagleOnListeners()
    }

    /// Sets `TCP_NODELAY` on the cluster's listening sockets, which the connections it accepts
    /// inherit, as Apache Kafka sets it on every connection. The mock cluster does not, so an
    /// answer written while the client has not yet acknowledged the one before waited for that
    /// acknowledgement (Nagle's algorithm), which the client delays (delayed ACK) until it sends
    /// its next request or up to 40 ms: every round trip took as long as the gap between requests.
    private func disableNagleOnListeners() {
        let ports = Set(
            bootstrapServers.split(separator: ",").compactMap { $0.split(separator: ":").last.flatMap { UInt16($0) } })
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let descriptor = Int32(name), Self.isListeningSocket(descriptor, onOneOf: ports) else { continue }
            var on: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    private static func isListeningSocket(_ descriptor: Int32, onOneOf ports: Set<UInt16>) -> Bool {
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening != 0 else {
            return false
        }
        var address = sockaddr_in()
        var addressLength = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &addressLength) }
        }
        return named == 0 && address.sin_family == sa_family_t(AF_INET)
            && ports.contains(UInt16(bigEndian: address.sin_port))
    }

    /// Properties for clients of this cluster: a short `fetch.wait.max.ms`, because the mock
    /// cluster answers an empty fetch only when its wait is over (librdkafka's default 500 ms
    /// would add up to half a second per hop), where Apache Kafka answers as soon as data arrives.
    public static let clientProperties = ["fetch.wait.max.ms": "5"]

    /// Creates a topic (replication factor at most the number of brokers).
    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) async throws {
        try await command("create topic \(name)") {
            rd_kafka_mock_topic_create($0, name, partitions, replicationFactor)
        }
    }

    /// Makes the next `errors.count` requests of this API (a Kafka protocol
    /// ApiKey: 0 Produce, 1 Fetch, 8 OffsetCommit, ...) fail with these codes, in order.
    public func pushRequestErrors(apiKey: Int16, errors: [Int32]) {
        var codes = errors.map { rd_kafka_resp_err_t(rawValue: $0) }
        rd_kafka_mock_push_request_errors_array(cluster.pointer, apiKey, codes.count, &codes)
    }

    /// Takes a broker off the network (connections drop, new ones are refused).
    ///
    /// librdkafka closes the broker's listening socket and at once binds a new one to the same
    /// port, and it aborts the process if that bind fails. It fails with "Address already in use"
    /// while a child process of this process is starting: from its spawn until its exec closes
    /// them, the child holds a copy of every descriptor, the old listening socket included, which
    /// still listens on the port. So the rebind waits for any start made through
    /// ``startingChildProcess(_:)``, and whatever starts child processes in a process whose brokers
    /// go down starts them through it. The bind also fails when the process is out of descriptors
    /// (`Scripts/test.sh` raises the soft limit to the hard one), or when another socket took the
    /// port in between, which it can only while nothing is connected to the broker: take a broker
    /// down while a client is connected to it.
    public func setBrokerDown(_ brokerId: Int32) async throws {
        try await command("broker \(brokerId) down") { cluster in
            Self.listenerRebinds.withLock { _ in rd_kafka_mock_broker_set_down(cluster, brokerId) }
        }
    }

    /// Held while a broker's listener is bound again and while a child process starts.
    private static let listenerRebinds = Mutex(())

    /// Runs `start`, which starts a child process (`Process.run()`, `posix_spawn`), while no
    /// embedded broker of this process is being taken down: see ``setBrokerDown(_:)``. `posix_spawn`
    /// (which `Process.run()` calls) returns once the child's `exec` has begun, and that `exec`
    /// closes the child's copies of the descriptors a moment later.
    public static func startingChildProcess<Result>(_ start: () throws -> Result) rethrows -> Result {
        try listenerRebinds.withLock { _ in try start() }
    }

    /// Brings a broker back.
    public func setBrokerUp(_ brokerId: Int32) async throws {
        try await command("broker \(brokerId) up") { rd_kafka_mock_broker_set_up($0, brokerId) }
        disableNagleOnListeners()
    }

    /// Delays every answer of a broker by `milliseconds`.
    public func setRoundTripTime(broker brokerId: Int32, milliseconds: Int32) async throws {
        try await command("broker \(brokerId) rtt") { rd_kafka_mock_broker_set_rtt($0, brokerId, milliseconds) }
    }

    /// Runs a command on the cluster. librdkafka hands it to the cluster's thread and waits for
    /// its answer, so the wait happens on a thread of its own, never on the cooperative pool.
    private func command(
        _ context: String, _ call: @escaping @Sendable (OpaquePointer) -> rd_kafka_resp_err_t
    ) async throws(KafkaError) {
        let cluster = cluster
        let result = await blockingCalls.run { call(cluster.pointer) }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: context) }
    }

    /// Stops the cluster; clients still connected see it go down. librdkafka joins the
    /// cluster's thread, which can take up to a second (its poll interval), so this runs
    /// on a thread of its own, never on the cooperative pool. Call it once.
    public func shutdown() async {
        let cluster = cluster
        let host = host
        await blockingCalls.run {
            rd_kafka_mock_cluster_destroy(cluster.pointer)
            rd_kafka_destroy(host.pointer)
        }
    }

    /// Runs `body` with a fresh embedded cluster of `brokers` brokers and shuts the cluster
    /// down when `body` returns or throws.
    public static func withBroker<Result>(
        brokers: Int = 1, logger: Logger, _ body: (EmbeddedBroker) async throws -> Result
    ) async throws -> Result {
        let broker = try EmbeddedBroker(brokers: brokers, logger: logger)
        do {
            let result = try await body(broker)
            await broker.shutdown()
            return result
        } catch {
            await broker.shutdown()
            throw error
        }
    }
}

/// Kafka protocol API keys, for ``EmbeddedBroker/pushRequestErrors(apiKey:errors:)``.
public enum KafkaAPIKey {
    public static let produce: Int16 = 0
    public static let fetch: Int16 = 1
    public static let offsetCommit: Int16 = 8
    public static let offsetFetch: Int16 = 9
    public static let joinGroup: Int16 = 11
    public static let heartbeat: Int16 = 12
    public static let initProducerId: Int16 = 22
}

/// Broker error codes, for ``EmbeddedBroker/pushRequestErrors(apiKey:errors:)``.
public enum KafkaErrorCode {
    public static let notLeaderForPartition: Int32 = RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION.rawValue
    public static let requestTimedOut: Int32 = RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT.rawValue
    public static let notEnoughReplicas: Int32 = RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS.rawValue
    public static let coordinatorNotAvailable: Int32 = RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE.rawValue
}
