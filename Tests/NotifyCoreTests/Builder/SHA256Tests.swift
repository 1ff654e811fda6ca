import CSHA256
import Crypto
import Testing

@Suite struct SHA256Tests {
    /// The digest as hex, after checking that the portable compression agrees with the one the CPU chose.
    private func hex(_ message: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var portable = [UInt8](repeating: 0, count: 32)
        message.withUnsafeBytes {
            notify_sha256($0.baseAddress, $0.count, &digest)
            notify_sha256_portable($0.baseAddress, $0.count, &portable)
        }
        #expect(digest == portable, "SHA extensions and portable code differ at length \(message.count)")
        return hex(bytes: digest)
    }

    private func hex(bytes: some Sequence<UInt8>) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 0x0F, radix: 16) }.joined()
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        // 56 bytes: the length no longer fits the last block, so the tail takes two.
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func matchesTheFIPSExamples(_ message: String, _ expected: String) {
        #expect(hex(Array(message.utf8)) == expected)
    }

    @Test func matchesSwiftCryptoAtEveryLengthAroundTheBlockBoundaries() {
        // The same bytes every run (a failure reproduces), all 256 values over the lengths.
        for length in 0...300 {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 167 &+ length &* 31 &+ 7) }
            let expected = hex(bytes: SHA256.hash(data: message))
            #expect(hex(message) == expected, "length \(length)")
        }
    }
}
