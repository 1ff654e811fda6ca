import Foundation
import Glibc
import Synchronization

/// A fixed bootstrap address for the embedded broker, whose own port changes every run (librdkafka's
/// mock cluster binds a free port): it listens on 127.0.0.1:`port` and forwards each connection to the
/// broker. Clients only bootstrap through it: the metadata they read there names the broker's own
/// address, which they use from then on.
///
/// Each connection is pumped by two threads of its own (they block in `read`), never by the
/// cooperative pool; it is for development, with a handful of clients.
final class BootstrapForwarder: Sendable {
    /// The port it listens on.
    let port: Int
    private let listener: Int32
    private let targetPort: Int

    /// The port is taken (errno `EADDRINUSE`), or another socket error.
    struct BindFailure: Error, CustomStringConvertible {
        let port: Int
        let code: Int32
        var description: String {
            code == EADDRINUSE
                ? "127.0.0.1:\(port) is in use (another notify dev, or a Kafka broker?): stop it, or pass --broker-port PORT (0 picks a free port)"
                : "cannot listen on 127.0.0.1:\(port) for the broker: \(String(cString: strerror(code)))"
        }
    }

    /// Binds 127.0.0.1:`port` at once (so a taken port fails here); forwards nothing until ``start()``.
    init(port: Int, forwardingTo targetPort: Int) throws {
        let socket: Int32
        do throws(Errno) {
            socket = try Self.listeningSocket(host: "127.0.0.1", port: port)
        } catch {
            throw BindFailure(port: port, code: error.code)
        }
        listener = socket
        self.port = port
        self.targetPort = targetPort
    }

    /// An `errno` of a socket call.
    struct Errno: Error {
        let code: Int32
    }

    /// A socket listening on `host` (an IPv4 address) and `port`.
    static func listeningSocket(host: String, port: Int) throws(Errno) -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Errno(code: errno) }
        var yes: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = address(host: host, port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(socket, 64) == 0 else {
            let code = errno
            close(socket)
            throw Errno(code: code)
        }
        return socket
    }

    /// Fails with `message` when another socket listens on `host:port` already; an address it cannot
    /// try (port 0, a host name, IPv6) passes, and the server's own bind decides.
    static func requireFree(host: String, port: Int, message: @autoclosure () -> String) throws {
        guard port != 0, inet_addr(host) != INADDR_NONE else { return }
        do throws(Errno) {
            close(try listeningSocket(host: host, port: port))
        } catch {
            if error.code == EADDRINUSE { throw CommandFailure(message()) }
        }
    }

    /// Accepts and forwards connections on a thread of its own until ``stop()``.
    func start() {
        let listener = listener
        let targetPort = targetPort
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return  // stopped
                }
                let broker = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = Self.address(host: "127.0.0.1", port: targetPort)
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(broker, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard broker >= 0, connected == 0 else {
                    close(client)
                    if broker >= 0 { close(broker) }
                    continue
                }
                let connection = Connection(client: client, broker: broker)
                Self.pump(from: client, to: broker, of: connection)
                Self.pump(from: broker, to: client, of: connection)
            }
        }
    }

    /// Stops accepting; forwarded connections end when either side closes.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// The two sockets of a forwarded connection, closed when both directions have ended.
    private final class Connection: Sendable {
        let client: Int32
        let broker: Int32
        private let running = Mutex(2)

        init(client: Int32, broker: Int32) {
            self.client = client
            self.broker = broker
        }

        func directionEnded() {
            guard
                running.withLock({
                    $0 -= 1
                    return $0 == 0
                })
            else { return }
            close(client)
            close(broker)
        }
    }

    /// Copies bytes from `source` to `destination` until `source` ends, then ends `destination`'s writing
    /// side; the second direction of a connection to end closes both sockets.
    private static func pump(from source: Int32, to destination: Int32, of connection: Connection) {
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            loop: while true {
                let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                var written = 0
                while written < count {
                    let result = buffer.withUnsafeBytes {
                        write(destination, $0.baseAddress! + written, count - written)
                    }
                    if result < 0 && errno == EINTR { continue }
                    guard result > 0 else { break loop }
                    written += result
                }
            }
            shutdown(destination, Int32(SHUT_WR))
            shutdown(source, Int32(SHUT_RD))
            connection.directionEnded()
        }
    }

    private static func address(host: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        return address
    }
}
