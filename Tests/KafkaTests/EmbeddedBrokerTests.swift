import Foundation
import Glibc
import Kafka
import Testing

@Suite struct EmbeddedBrokerTests {
    /// Apache Kafka turns Nagle's algorithm off on its connections; the mock cluster did not, so an
    /// answer could wait for the client's delayed acknowledgement of the one before (up to 40 ms).
    @Test func acceptedConnectionsHaveNagleOffAlsoAfterTheBrokerComesBack() async throws {
        try await withEmbeddedBroker(topics: [:]) { broker in
            let port = try #require(broker.bootstrapServers.split(separator: ":").last.flatMap { UInt16($0) })
            #expect(try await acceptedConnectionNoDelay(port: port) == true)

            try broker.setBrokerDown(1)
            try broker.setBrokerUp(1)
            #expect(try await acceptedConnectionNoDelay(port: port) == true)
        }
    }

    /// Connects to `port` on loopback and reads `TCP_NODELAY` off the connection the broker (in this
    /// process) accepted: nil if it was not accepted within two seconds.
    private func acceptedConnectionNoDelay(port: UInt16) async throws -> Bool? {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(client >= 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        var clientAddress = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &clientAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(client, $0, &length) }
        }
        // The accepted end: bound to the broker's port, its peer the client's port.
        for _ in 0..<200 {
            for descriptor in try openDescriptors() where descriptor != client {
                guard localPort(of: descriptor, peer: false) == port,
                      localPort(of: descriptor, peer: true) == UInt16(bigEndian: clientAddress.sin_port) else { continue }
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length) }
        }
        guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return UInt16(bigEndian: address.sin_port)
    }
}
