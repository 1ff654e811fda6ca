/// A strict JSON syntax check (RFC 8259) that says where a document goes wrong, by line and column.
/// Foundation's decoder accepts a trailing comma and reports errors by byte offset only.
enum JSONSyntax {
    /// Where and why a document is not JSON.
    struct Failure: Error, Equatable, CustomStringConvertible {
        /// 1-based line and column (in characters) of the offending character.
        var line: Int
        var column: Int
        var reason: String
        var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// Nil when `text` is one JSON value surrounded by whitespace only.
    static func failure(in text: String) -> Failure? {
        var scanner = Scanner(characters: Array(text.unicodeScalars))
        do {
            scanner.skipWhitespace()
            try scanner.value()
            scanner.skipWhitespace()
            if !scanner.atEnd { throw scanner.failure("unexpected \(scanner.found) after the end of the document") }
            return nil
        } catch let failure as Failure {
            return failure
        } catch {
            return nil
        }
    }

    private struct Scanner {
        let characters: [Unicode.Scalar]
        var index = 0

        var atEnd: Bool { index >= characters.count }
        var current: Unicode.Scalar? { atEnd ? nil : characters[index] }
        var found: String {
            guard let current else { return "the end of the file" }
            return current == "\n" ? "a line break" : "\"\(current)\""
        }

        func failure(_ reason: String) -> Failure {
            var line = 1
            var column = 1
            for character in characters[..<min(index, characters.count)] {
                if character == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            }
            return Failure(line: line, column: column, reason: reason)
        }

        mutating func skipWhitespace() {
            while let current, [" ", "\t", "\n", "\r"].contains(current) { index += 1 }
        }

        mutating func expect(_ character: Unicode.Scalar, _ context: String) throws {
            guard current == character else { throw failure("expected \"\(character)\" \(context), found \(found)") }
            index += 1
        }

        mutating func value() throws {
            guard let character = current else { throw failure("expected a value, found \(found)") }
            switch character {
            case "{": try object()
            case "[": try array()
            case "\"": try string()
            case "-", "0"..."9" as ClosedRange<Unicode.Scalar>: try number()
            case "t": try word("true")
            case "f": try word("false")
            case "n": try word("null")
            default: throw failure("expected a value, found \(found)")
            }
        }

        mutating func object() throws {
            index += 1
            skipWhitespace()
            if current == "}" {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                guard current == "\"" else {
                    throw failure(
                        current == "}"
                            ? "a comma must be followed by another member (trailing commas are not JSON)"
                            : "expected a member name in double quotes, found \(found)")
                }
                try string()
                skipWhitespace()
                try expect(":", "after a member name")
                skipWhitespace()
                try value()
                skipWhitespace()
                if current == "," {
                    index += 1
                    continue
                }
                try expect("}", "or \",\" after a member")
                return
            }
        }

        mutating func array() throws {
            index += 1
            skipWhitespace()
            if current == "]" {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                if current == "]" {
                    throw failure("a comma must be followed by another element (trailing commas are not JSON)")
                }
                try value()
                skipWhitespace()
                if current == "," {
                    index += 1
                    continue
                }
                try expect("]", "or \",\" after an element")
                return
            }
        }

        mutating func string() throws {
            index += 1
            while let character = current {
                switch character {
                case "\"":
                    index += 1
                    return
                case "\\":
                    index += 1
                    guard let escaped = current, "\"\\/bfnrtu".unicodeScalars.contains(escaped) else {
                        throw failure("invalid escape \\\(current.map(String.init) ?? "")")
                    }
                    index += 1
                    if escaped == "u" {
                        for _ in 0..<4 {
                            guard let digit = current, digit.properties.isASCIIHexDigit else {
                                throw failure("expected 4 hex digits after \\u")
                            }
                            index += 1
                        }
                    }
                case _ where character.value < 0x20:
                    throw failure(
                        "a control character (such as a line break) inside a string: close the string with \"")
                default: index += 1
                }
            }
            throw failure("a string is not closed")
        }

        mutating func number() throws {
            if current == "-" { index += 1 }
            guard let first = current, ("0"..."9").contains(first) else {
                throw failure("expected a digit, found \(found)")
            }
            index += 1
            if first != "0" { digits() }
            if current == "." {
                index += 1
                guard let digit = current, ("0"..."9").contains(digit) else {
                    throw failure("expected a digit after \".\", found \(found)")
                }
                digits()
            }
            if current == "e" || current == "E" {
                index += 1
                if current == "+" || current == "-" { index += 1 }
                guard let digit = current, ("0"..."9").contains(digit) else {
                    throw failure("expected an exponent, found \(found)")
                }
                digits()
            }
        }

        mutating func digits() {
            while let digit = current, ("0"..."9").contains(digit) { index += 1 }
        }

        mutating func word(_ word: String) throws {
            for expected in word.unicodeScalars {
                guard current == expected else { throw failure("expected \(word), found \(found)") }
                index += 1
            }
        }
    }
}
