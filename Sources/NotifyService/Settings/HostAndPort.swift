/// A `HOST:PORT` pair: where a server listens or a client connects. IPv6 hosts are written in brackets.
public struct HostAndPort: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (`[::1]:8080` for IPv6).
    public static func parse(_ text: String) -> Result<HostAndPort, InvalidAddress> {
        guard let colon = text.lastIndex(of: ":") else {
            return .failure(InvalidAddress(reason: "\"\(text)\" is not HOST:PORT (no port)"))
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" ") else {
            return .failure(InvalidAddress(reason: "\"\(text)\" is not HOST:PORT (no host)"))
        }
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return .failure(InvalidAddress(reason: "\"\(text)\" is not HOST:PORT (port must be 0…65535)"))
        }
        return .success(HostAndPort(host: host, port: port))
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Why a text is not `HOST:PORT`.
public struct InvalidAddress: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
