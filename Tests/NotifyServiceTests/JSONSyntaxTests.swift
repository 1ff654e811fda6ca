import Foundation
import Testing

@testable import NotifyService

@Suite("Config files: strict JSON syntax, placed by line and column")
struct JSONSyntaxTests {
    @Test(
        "valid documents pass",
        arguments: [
            #"{}"#, #"[]"#, #" {"a": [1, -2.5e3, true, false, null, "x\"\u00e9"], "b": {}} "#, "\"山田\"", "0",
        ])
    func valid(_ text: String) {
        #expect(JSONSyntax.failure(in: text) == nil)
    }

    @Test("each error names its line, column and what is wrong")
    func errors() {
        #expect(
            JSONSyntax.failure(in: #"{"a": 1,}"#)
                == .init(
                    line: 1, column: 9,
                    reason: "a comma must be followed by another member (trailing commas are not JSON)"))
        #expect(
            JSONSyntax.failure(in: "[1,\n 2,\n]")
                == .init(
                    line: 3, column: 1,
                    reason: "a comma must be followed by another element (trailing commas are not JSON)"))
        #expect(
            JSONSyntax.failure(in: "{\n  a: 1}")
                == .init(line: 2, column: 3, reason: "expected a member name in double quotes, found \"a\""))
        #expect(
            JSONSyntax.failure(in: #"{"a" 1}"#)
                == .init(line: 1, column: 6, reason: "expected \":\" after a member name, found \"1\""))
        #expect(
            JSONSyntax.failure(in: #"{"a": tru}"#) == .init(line: 1, column: 10, reason: "expected true, found \"}\""))
        #expect(
            JSONSyntax.failure(in: #"{"a": 1} x"#)
                == .init(line: 1, column: 10, reason: "unexpected \"x\" after the end of the document"))
        #expect(JSONSyntax.failure(in: #"{"a": "b"#) == .init(line: 1, column: 9, reason: "a string is not closed"))
        #expect(
            JSONSyntax.failure(in: #"{"a": 01}"#)
                == .init(line: 1, column: 8, reason: "expected \"}\" or \",\" after a member, found \"1\""))
    }

    @Test("the config check reports the syntax error instead of Foundation's byte offset")
    func configCheck() {
        let problems = SettingsFileCheck.problems(in: Data(#"{"kafka": {"bootstrap": "a:1"},}"#.utf8), source: "n.json")
        #expect(
            problems.map(\.description) == [
                "n.json: not valid JSON: line 1, column 32: a comma must be followed by another member (trailing commas are not JSON)"
            ])
    }

    @Test("kafka.properties members go through the property check, each with its own path")
    func propertyCheck() {
        let problems = SettingsFileCheck.problems(
            in: Data(#"{"kafka": {"properties": {"a.b": "1", "linger.ms": "5"}}}"#.utf8), source: "n.json",
            checkProperty: { name, _ in name == "a.b" ? "no such property" : nil })
        #expect(problems.map(\.description) == ["n.json: kafka.properties.a.b: invalid value: no such property"])
    }
}
