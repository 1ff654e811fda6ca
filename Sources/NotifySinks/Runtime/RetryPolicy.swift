/// How often and how patiently a failed delivery is tried again: exponential backoff with jitter,
/// never sooner than the service's `Retry-After`.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included; after the last the command is dead-lettered.
    public var maxAttempts: Int
    /// The backoff before the second attempt.
    public var initialDelay: Duration
    /// The longest backoff (a `Retry-After` may ask for longer and is honoured).
    public var maxDelay: Duration
    /// How much the backoff grows per attempt.
    public var multiplier: Double

    public init(
        maxAttempts: Int = 8, initialDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(60),
        multiplier: Double = 2
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.multiplier = multiplier
    }

    /// The wait after failed attempt number `attempt` (1-based): "equal jitter", a random point in
    /// the upper half of the exponential step, and at least `retryAfter`.
    public func delay(afterAttempt attempt: Int, retryAfter: Duration?, jitter: Double = Double.random(in: 0...1))
        -> Duration
    {
        var step = initialDelay
        for _ in 1..<max(1, attempt) {
            step = step * multiplier
            if step >= maxDelay { break }
        }
        step = min(step, maxDelay)
        let jittered = step / 2 + (step / 2) * jitter
        return max(jittered, retryAfter ?? .zero)
    }
}
