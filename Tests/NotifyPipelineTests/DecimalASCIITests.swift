import Testing

@testable import NotifyPipeline

@Suite struct DecimalASCIITests {
    @Test(arguments: [Int64.min, -1_234_567, -1, 0, 7, 1_764_237_600_000, .max])
    func anIntegerReadsBackAsWritten(_ number: Int64) {
        var bytes: [UInt8] = Array("x".utf8)
        DecimalASCII.append(number, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x\(number)")
        #expect(DecimalASCII.parse(bytes.dropFirst()) == number)
    }

    @Test(arguments: ["", "-", "+5", "1a", " 1", "1 ", "9223372036854775808", "-9223372036854775809"])
    func anythingElseIsNoInteger(_ text: String) {
        #expect(DecimalASCII.parse(Array(text.utf8)) == nil)
    }

    /// The header values of progress marks, as readers in other instances and earlier versions read
    /// them, and back.
    @Test func aProgressMarkReadsBackFromItsHeaderValue() {
        let cases: [(task: Int32, mark: ProgressMark, text: String)] = [
            (0, .at(1_764_237_600_000), "0:1764237600000"), (255, .at(.min), "255:-9223372036854775808"),
            (3, .at(-5), "3:-5"), (.max, .idle(since: 42_000), "2147483647:42+"), (7, .finished, "7:max"),
        ]
        for (task, mark, text) in cases {
            let value = mark.headerValue(task: task)
            #expect(String(decoding: value, as: UTF8.self) == text)
            #expect(ProgressMark.parse(value)?.task == task)
            #expect(ProgressMark.parse(value)?.mark == mark)
        }
        // An idle mark is kept in microseconds and said in whole milliseconds, rounded down.
        #expect(String(decoding: ProgressMark.idle(since: 42_999).headerValue(task: 1), as: UTF8.self) == "1:42+")
        for text in ["3:", "3:+", ":5", "x:5", "3:5x", "2147483648:5", "3:max+"] {
            #expect(ProgressMark.parse(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
