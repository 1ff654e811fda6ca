import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NotifySinks
import Synchronization

/// How a stand-in answers one request, instead of accepting it.
public enum StandInAnswer: Sendable {
    /// An error status with the service's reason (APNs `reason`, FCM `errorCode`) and an optional `Retry-After`.
    case error(status: Int, reason: String, retryAfterSeconds: Int? = nil)
    /// Accept, but only after `delay`.
    case slow(Duration)
    /// Hold the request for `duration`, then answer 503 without accepting it (a request the
    /// sender gave up on, or that died with it).
    case stall(Duration)
    /// Accept at once (the notification is on the device), but hold the 200 back for `duration`:
    /// a sender killed meanwhile never learns that it delivered.
    case acceptThenHold(Duration)
}

/// What a stand-in received and accepted, in order, and the answers it has been told to give.
public final class StandInLedger<Received: Sendable>: Sendable {
    private struct State {
        var received: [Received] = []
        var count = 0
        var scripts: [String: [StandInAnswer]] = [:]
        var arrivals: [String: [ContinuousClock.Instant]] = [:]
        var waiters: [(count: Int, done: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    /// Whether accepted requests are kept (benchmarks only count).
    public let keepsRequests: Bool

    /// - Parameter keepsRequests: `false` only counts accepted requests.
    public init(keepsRequests: Bool = true) {
        self.keepsRequests = keepsRequests
    }

    /// The next requests for `key` (a device token, a command id) get `answers`, one each, in order.
    public func script(_ key: String, _ answers: [StandInAnswer]) {
        state.withLock { $0.scripts[key, default: []].append(contentsOf: answers) }
    }

    /// Notes that a request about `key` arrived, and returns its scripted answer if one is left.
    public func nextAnswer(for key: String) -> StandInAnswer? {
        state.withLock { state in
            state.arrivals[key, default: []].append(.now)
            guard var answers = state.scripts[key], !answers.isEmpty else { return nil }
            let answer = answers.removeFirst()
            state.scripts[key] = answers.isEmpty ? nil : answers
            return answer
        }
    }

    /// Notes an accepted request.
    public func accept(_ received: Received) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            if keepsRequests { state.received.append(received) }
            let count = state.count
            var ready: [CheckedContinuation<Void, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.count <= count else { return false }
                ready.append(waiter.done)
                return true
            }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// The accepted requests so far.
    public var received: [Received] { state.withLock { $0.received } }

    /// How many requests about `key` arrived, accepted or not.
    public func arrivals(of key: String) -> Int {
        state.withLock { $0.arrivals[key]?.count ?? 0 }
    }

    /// When each request about `key` arrived, in order.
    public func arrivalTimes(of key: String) -> [ContinuousClock.Instant] {
        state.withLock { $0.arrivals[key] ?? [] }
    }

    /// How many requests were accepted.
    public var count: Int { state.withLock { $0.count } }

    /// Returns once `count` requests were accepted, or after `timeout` (then check ``count``).
    public func waitForCount(_ count: Int, timeout: Duration = .seconds(30)) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let reached = self.state.withLock { state -> Bool in
                        if state.count >= count { return true }
                        state.waiters.append((count, continuation))
                        return false
                    }
                    if reached { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            // Release a waiter left behind by the timeout.
            let leftovers = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                let waiters = state.waiters.filter { $0.count == count }.map(\.done)
                state.waiters.removeAll { $0.count == count }
                return waiters
            }
            for waiter in leftovers { waiter.resume() }
        }
    }
}

/// Plays a scripted answer: returns the response to give instead of accepting (`refusal` with
/// status, reason and Retry-After seconds), or `nil` once the request is accepted (`accept` has
/// run) and its success may be answered, after any delay.
func play(
    _ answer: StandInAnswer?, unavailableReason: String, refusal: (Int, String, Int?) -> Response, accept: () -> Void
) async throws -> Response? {
    switch answer {
    case .error(let status, let reason, let retryAfter)?:
        return refusal(status, reason, retryAfter)
    case .slow(let delay)?:
        try await Task.sleep(for: delay)
        accept()
        return nil
    case .stall(let duration)?:
        try await Task.sleep(for: duration)
        return refusal(503, unavailableReason, nil)
    case .acceptThenHold(let duration)?:
        accept()
        try await Task.sleep(for: duration)
        return nil
    case nil:
        accept()
        return nil
    }
}

/// A JSON response.
func jsonResponse(status: Int, _ object: [String: Any], headers: HTTPFields = [:]) -> Response {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    var headers = headers
    headers[.contentType] = "application/json"
    return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}

/// `Retry-After: <seconds>`, when there is one.
func retryAfterHeader(_ seconds: Int?) -> HTTPFields {
    guard let seconds else { return [:] }
    return [.retryAfter: String(seconds)]
}

/// The value of header `name` (lowercase).
func field(_ name: String, in headers: HTTPFields) -> String? {
    headers.first { $0.name.canonicalName == name }?.value
}

/// Serves `router` over TLS (HTTP/2, or HTTP/1.1 for clients that do not offer h2) on
/// 127.0.0.1 at a free port while `body` runs; `bound` learns the port first.
func serveOverTLS<Value: Sendable>(
    _ router: Router<BasicRequestContext>, authority: TestCertificateAuthority, logger: Logger,
    bound: @escaping @Sendable (Int) -> Void = { _ in }, body: (Int) async throws -> Value
) async throws -> Value {
    let tls = try authority.serverTLSConfiguration()
    return try await withRunningServer(logger: logger) { onServerRunning in
        Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                bound(channel.localAddress?.port ?? 0)
                await onServerRunning(channel)
            },
            logger: logger
        )
    } body: { port in
        try await body(port)
    }
}

/// Serves `router` over plain HTTP/1.1 on 127.0.0.1 (a free port) while `body` runs; `body` gets the port.
func serveOnLoopback<Value: Sendable>(
    _ router: Router<BasicRequestContext>, logger: Logger, body: (Int) async throws -> Value
) async throws -> Value {
    try await withRunningServer(logger: logger) { onServerRunning in
        Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: onServerRunning, logger: logger)
    } body: { port in
        try await body(port)
    }
}
