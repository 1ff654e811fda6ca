import NotifyCore

/// The `inapp` kind: delivers `local` commands through an ``InAppGateway``. A device that is not
/// connected, or does not acknowledge within `ackTimeout`, gives `undeliverable-local`, so the
/// pipeline can fall back to push with the same content.
public final class InAppSink: NotificationSink {
    public let kind = "inapp"

    /// The gateway devices connect to; it must be serving (``InAppGateway/serve(host:port:body:)``) while the sink delivers.
    public let gateway: InAppGateway
    private let ackTimeout: Duration

    /// - Parameter ackTimeout: how long a device has to acknowledge a command.
    public init(gateway: InAppGateway, ackTimeout: Duration = .seconds(5)) {
        self.gateway = gateway
        self.ackTimeout = ackTimeout
    }

    public func accepts(_ command: NotificationCommand) -> Bool {
        command.path == .local
    }

    public func deliver(_ delivery: Delivery) async -> DeliveryResult {
        let recipient = delivery.command.recipient
        return await gateway.send(
            delivery.json, commandId: delivery.command.id,
            to: DeviceAddress(userId: recipient.userId, deviceId: recipient.deviceId), ackTimeout: ackTimeout
        )
    }

    public func shutdown() async {}
}
