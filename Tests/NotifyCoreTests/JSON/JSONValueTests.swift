import Foundation
import Testing

@testable import NotifyCore

@Suite struct JSONValueTests {
    @Test func roundTripsEveryKind() throws {
        let value: JSONValue = .object([
            "b": .bool(true), "i": .int(42), "d": .double(1.5), "s": .string("x"),
            "a": .array([.null, .int(-1)]),
        ])
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }
}
