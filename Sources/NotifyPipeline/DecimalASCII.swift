/// Integers as decimal ASCII in bytes: the progress-mark and sequence headers, which every record of a
/// marked topic carries (``ProgressMark``, ``LocalProgressBoard``), are written and read without
/// going through `String`, which cost an allocation or two per header and record.
enum DecimalASCII {
    /// Appends `number` in decimal, after a `-` when it is negative.
    static func append(_ number: Int64, to bytes: inout [UInt8]) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var magnitude = number.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        // Reversed in place: through a slice (`bytes[start...].reverse()`), the digits were copied
        // out and back, an allocation per number.
        var (low, high) = (start, bytes.count - 1)
        while low < high {
            bytes.swapAt(low, high)
            (low, high) = (low + 1, high - 1)
        }
    }

    /// The integer `bytes` hold in decimal (an optional `-`, then digits and nothing else), if it fits
    /// in an `Int64`.
    static func parse(_ bytes: some Collection<UInt8>) -> Int64? {
        var index = bytes.startIndex
        let negative = index != bytes.endIndex && bytes[index] == UInt8(ascii: "-")
        if negative { bytes.formIndex(after: &index) }
        guard index != bytes.endIndex else { return nil }
        // Gathered below zero, where Int64.min fits.
        var value: Int64 = 0
        while index != bytes.endIndex {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowedAgain) = shifted.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAgain else { return nil }
            value = next
            bytes.formIndex(after: &index)
        }
        if negative { return value }
        return value == .min ? nil : -value
    }
}
