import Foundation
import NotifyTestSupport

@testable import NotifyCore

/// Paths in the repository the tests read.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let schemas = root.appendingPathComponent("Schemas")
    /// The golden files in the source tree (written when NOTIFY_UPDATE_GOLDEN=1).
    static let goldenSource = root.appendingPathComponent("Tests/NotifyCoreTests/Golden")

    static func configuration() throws -> CoreConfiguration {
        try CoreConfiguration.load(schemasDirectory: schemas.path)
    }

    static func bytes(_ url: URL) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url))
    }

    /// The JSON files under `directory`, sorted by path.
    static func jsonFiles(under directory: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        var files: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "json" { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }
}

/// Validates JSON instances against `Schemas/*.schema.json` with Python's
/// `jsonschema` (Draft 2020-12), a real, independent validator.
enum SchemaValidator {
    struct Item: Encodable {
        var schema: String
        var instance: JSONValue
    }

    private static let script = #"""
        import json, pathlib, sys
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
        directory = pathlib.Path(sys.argv[1])
        resources = []
        for path in sorted(directory.glob("*.schema.json")):
            schema = json.loads(path.read_text())
            Draft202012Validator.check_schema(schema)
            resources.append((schema["$id"], Resource.from_contents(schema)))
        registry = Registry().with_resources(resources)
        items = json.loads(pathlib.Path(sys.argv[2]).read_text())
        results = []
        for item in items:
            schema = json.loads((directory / item["schema"]).read_text())
            validator = Draft202012Validator(schema, registry=registry)
            errors = sorted(validator.iter_errors(item["instance"]), key=lambda e: list(map(str, e.absolute_path)))
            results.append(None if not errors else "; ".join(
                "/".join(map(str, e.absolute_path)) + ": " + e.message[:200] for e in errors[:3]))
        print(json.dumps(results))
        """#

    /// One result per item, in order (anything else throws): `nil` when valid, else the validator's errors.
    static func validate(_ items: [Item]) async throws -> [String?] {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent(
            "notify-schema-\(UUID().uuidString).json")
        try JSONEncoder().encode(items).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let result = try await runChildProcess("python3", ["-c", script, Repository.schemas.path, input.path])
        guard result.status == 0 else {
            throw ValidatorFailure(message: "python3 jsonschema failed (status \(result.status)): \(result.errorText)")
        }
        let results = try JSONDecoder().decode([String?].self, from: result.output)
        // Callers zip items with results: a short answer would leave items unchecked.
        guard results.count == items.count else {
            throw ValidatorFailure(message: "the validator answered \(results.count) results for \(items.count) items")
        }
        return results
    }

    struct ValidatorFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// A small deterministic random generator (SplitMix64) for property tests.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}
