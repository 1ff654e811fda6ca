import Foundation
import Testing

@testable import NotifySinks

@Suite struct TimestampsTests {
    @Test(arguments: [
        ("2026-11-22T03:00:00Z", 1_795_316_400.0), ("2026-11-22T12:00:00.250+09:00", 1_795_316_400.25),
        ("2026-11-21T22:30:00.5-04:30", 1_795_316_400.5),
    ])
    func readsTheContractsTimestamps(_ text: String, _ seconds: Double) {
        #expect(Timestamps.parse(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test func writesUTCToTheMillisecondAndReadsItBack() throws {
        let date = Date(timeIntervalSince1970: 1_795_316_400.123_9)
        #expect(Timestamps.format(date) == "2026-11-22T03:00:00.123Z")
        #expect(try #require(Timestamps.parse(Timestamps.format(date))).timeIntervalSince1970 == 1_795_316_400.123)
    }

    @Test(arguments: ["", "2026-11-22", "2026-13-01T00:00:00Z", "2026-11-22T03:00:00", "not a date"])
    func refusesWhatIsNotAnRFC3339Timestamp(_ text: String) {
        #expect(Timestamps.parse(text) == nil)
    }
}
