import Crypto
import NotifyCore

/// The key a push platform uses to replace a notification already on the device with a newer one
/// of the same key (APNs `apns-collapse-id`, Android's `notification.tag`), derived from the
/// command id so that a command sent twice (after a sink crashed between sending and reporting
/// it) shows once.
public enum ReplacementKey {
    /// The longest key APNs takes (and the limit the platform rules use for collapse keys).
    public static let maximumBytes = NotificationPolicy.maximumCollapseKeyBytes

    /// The command id itself when it fits in ``maximumBytes`` (the pipeline's ids are 32 hex
    /// digits), else the 64 hex digits of its SHA-256.
    public static func forCommand(_ commandId: String) -> String {
        if commandId.utf8.count <= maximumBytes { return commandId }
        return SHA256.hash(data: Array(commandId.utf8)).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
    }
}
