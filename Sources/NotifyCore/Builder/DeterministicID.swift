import CSHA256

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
        digest("apns-id", commandId).withBytes { digest in
            String(unsafeUninitializedCapacity: 36) { text in
                var count = 0
                for index in 0..<16 {
                    var byte = digest[index]
                    if index == 6 { byte = (byte & 0x0F) | 0x80 }
                    if index == 8 { byte = (byte & 0x3F) | 0x80 }
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[count] = UInt8(ascii: "-")
                        count += 1
                    }
                    text[count] = hexDigit(byte >> 4)
                    text[count + 1] = hexDigit(byte & 0x0F)
                    count += 2
                }
                return count
            }
        }
    }

    /// A SHA-256 digest, on the stack.
    private struct Digest {
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            withUnsafeBytes(of: bytes, body)
        }
    }

    /// SHA-256 of the label and the parts joined by 0x1F, hashed in one pass from a buffer on the stack.
    private static func digest(_ label: StaticString, _ first: String, _ second: String? = nil, _ third: String? = nil)
        -> Digest
    {
        let length =
            label.utf8CodeUnitCount + 1 + first.utf8.count + (second.map { 1 + $0.utf8.count } ?? 0)
            + (third.map { 1 + $0.utf8.count } ?? 0)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            let start = buffer.baseAddress!
            start.initialize(from: label.utf8Start, count: label.utf8CodeUnitCount)
            var end = start + label.utf8CodeUnitCount
            end = append(first, at: end)
            if let second { end = append(second, at: end) }
            if let third { end = append(third, at: end) }
            var digest = Digest()
            withUnsafeMutableBytes(of: &digest.bytes) {
                notify_sha256(start, end - start, $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            return digest
        }
    }

    /// Writes 0x1F and `part` at `position`; returns where they end.
    private static func append(_ part: String, at position: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
    {
        position.initialize(to: 0x1F)
        func copy(_ utf8: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
            if let base = utf8.baseAddress { (position + 1).initialize(from: base, count: utf8.count) }
            return position + 1 + utf8.count
        }
        // Native and small strings lend their bytes without a copy of the string (a `var` copy costs a retain).
        if let end = part.utf8.withContiguousStorageIfAvailable(copy) { return end }
        var part = part
        return part.withUTF8(copy)
    }

    /// The lowercase hex digit of `value` (0…15).
    @inline(__always)
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }

    private static func hex(_ digest: Digest, count: Int) -> String {
        digest.withBytes { bytes in
            String(unsafeUninitializedCapacity: count * 2) { text in
                for index in 0..<count {
                    text[2 * index] = hexDigit(bytes[index] >> 4)
                    text[2 * index + 1] = hexDigit(bytes[index] & 0x0F)
                }
                return count * 2
            }
        }
    }
}
