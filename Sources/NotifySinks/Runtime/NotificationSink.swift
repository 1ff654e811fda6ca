import NotifyCore

/// A sink kind: the part of a sink that talks to one delivery service.
///
/// Everything else (reading `notify.commands`, per-device order, one delivery per command id also
/// across restarts (after a crash, a replacement of the copy that may be on the device), expiry,
/// retries with backoff, the dead-letter topic, outcomes and offset commits) is done by
/// ``SinkRuntime`` for every kind alike. To add a kind:
///
/// 1. Write a `Sendable` type conforming to `NotificationSink`. ``accepts(_:)`` picks the commands
///    the kind is responsible for (e.g. `path == .push && recipient.provider == .apns`); the runtime
///    skips the others without reporting anything.
/// 2. ``deliver(_:)`` makes exactly one attempt and classifies what happened as a
///    ``DeliveryResult``. It must not retry by itself (the runtime does, honouring order and
///    expiry), must not throw (map every failure to a result), and should give up within a bounded
///    time (use a request timeout). The runtime records a command's attempt on `notify.outcomes`
///    before the first one, so after a crash a command that may have gone out is sent again with
///    ``Delivery/replacesEarlierAttempt`` set: send the platform's replacement key
///    (``ReplacementKey``) on every attempt, so a second copy replaces the first on the device
///    instead of adding another notification.
/// 3. ``shutdown()`` releases connections; the runtime calls it once after its last delivery.
///
/// Teams that prefer another language run the `webhook` kind and receive each command as a signed
/// HTTP POST instead.
public protocol NotificationSink: Sendable {
    /// The kind's name, reported as `sink` in every outcome (`apns`, `fcm`, `inapp`, ...).
    var kind: String { get }
    /// Whether this kind delivers `command`. Commands it does not accept produce no outcome.
    func accepts(_ command: NotificationCommand) -> Bool
    /// One delivery attempt.
    func deliver(_ delivery: Delivery) async -> DeliveryResult
    /// Releases the kind's resources.
    func shutdown() async
}

/// One delivery attempt handed to a ``NotificationSink``.
public struct Delivery: Sendable {
    /// The decoded command.
    public var command: NotificationCommand
    /// The command exactly as it was read from `notify.commands` (what the webhook and jsonl kinds pass on).
    public var json: [UInt8]
    /// 1 for the first attempt, 2 for the first retry, ...
    public var attempt: Int
    /// An earlier attempt of this command was recorded but never reported (a sink crashed or lost
    /// its partition in between), so the device may already show it. Every attempt should carry
    /// the platform's replacement key (``ReplacementKey``), so that this one replaces that copy.
    public var replacesEarlierAttempt: Bool

    public init(command: NotificationCommand, json: [UInt8], attempt: Int = 1, replacesEarlierAttempt: Bool = false) {
        self.command = command
        self.json = json
        self.attempt = attempt
        self.replacesEarlierAttempt = replacesEarlierAttempt
    }
}

/// What one delivery attempt came to.
public enum DeliveryResult: Sendable, Equatable {
    /// The service accepted the notification.
    case delivered
    /// The service says the device token is no longer valid (APNs 410 `Unregistered`,
    /// `BadDeviceToken`, FCM `UNREGISTERED`). Reported as `token-invalid`; nothing more goes to
    /// the token until the device list changes.
    case tokenInvalid(reason: String, token: String)
    /// A passing failure (throttling, 5xx, network): try again later, not before `retryAfter`
    /// when the service named a time.
    case retryable(reason: String, retryAfter: Duration? = nil)
    /// The service refused the notification for good: reported as `failed` and dead-lettered.
    case rejected(reason: String)
    /// The local path could not reach the device (not connected, not acknowledged in time); the
    /// pipeline falls back to push with the same content.
    case undeliverableLocal(reason: String)
}
