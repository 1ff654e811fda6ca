/// The ids of the last events applied to one key, to recognise an event that comes again (an
/// at-least-once producer's duplicate). Kept in the key's changelog record.
public struct RecentEventIds: Sendable, Hashable {
    /// Oldest first.
    public private(set) var ids: [String]
    /// How many ids are remembered.
    public static let limit = 32

    public init(_ ids: [String] = []) {
        self.ids = Array(ids.suffix(Self.limit))
    }

    public func contains(_ id: String) -> Bool { ids.contains(id) }

    /// Notes `id` as applied.
    public mutating func insert(_ id: String) {
        ids.append(id)
        if ids.count > Self.limit { ids.removeFirst() }
    }
}
