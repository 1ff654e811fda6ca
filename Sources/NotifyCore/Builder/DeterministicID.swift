import Crypto

/// Ids derived from their inputs by SHA-256 (rule 15), so the same events
/// always give the same ids, on every instance and in every replay.
public enum DeterministicID {
    /// The command id: 32 hex digits derived from (message id or event id, device id, path).
    public static func commandId(source: String, deviceId: String, path: DeliveryPath) -> String {
        hex(digest("command", source, deviceId, path.rawValue), count: 16)
    }

    /// The id of the `notify.fanout` record of one message for one recipient.
    public static func fanoutId(messageId: String, recipientId: String) -> String {
        hex(digest("fanout", messageId, recipientId), count: 16)
    }

    /// The `apns-id` of a command: a UUID (version 8, RFC 9562) formed from the hash of the command id.
    public static func apnsId(commandId: String) -> String {
        var bytes = Array(digest("apns-id", commandId).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func digest(_ parts: String...) -> SHA256.Digest {
        var hasher = SHA256()
        for (index, part) in parts.enumerated() {
            if index > 0 { hasher.update(data: [0x1F]) }
            var part = part
            part.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }
        return hasher.finalize()
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func hex(_ bytes: some Sequence<UInt8>, count: Int) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(count * 2)
        for byte in bytes.prefix(count) {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
