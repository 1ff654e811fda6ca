/// The ids of the last events applied to one key, to recognise an event that comes again (an
/// at-least-once producer's duplicate). Kept in the key's changelog record.
///
/// Every event of a stage is looked up here and most are then noted, so both are cheap: the ids sit
/// in a ring (noting one overwrites the oldest, nothing is shifted), each with its hash, which is
/// compared before the id itself.
public struct RecentEventIds: Sendable {
    /// The ids in a ring, each with its `hashValue` (for the look-up's first comparison; this
    /// process's hashes, never stored): the oldest at `oldest` once the ring is full, else at 0.
    /// One array, not one for the ids and one for the hashes: a key's ring grows as its events come,
    /// and every growth of each array was an allocation.
    private var ring: [(hash: Int, id: String)] = []
    private var oldest = 0
    /// How many ids are remembered.
    public static let limit = 32
    /// The room a ring starts with, so that a key's first few events need one allocation.
    private static let initialCapacity = 4

    public init(_ ids: [String] = []) {
        if !ids.isEmpty { ring.reserveCapacity(max(Self.initialCapacity, min(ids.count, Self.limit))) }
        for id in ids.suffix(Self.limit) { insert(id) }
    }

    /// Oldest first.
    public var ids: [String] {
        var ids: [String] = []
        ids.reserveCapacity(ring.count)
        for index in ring.indices { ids.append(ring[(oldest + index) % ring.count].id) }
        return ids
    }

    public func contains(_ id: String) -> Bool { contains(id, hash: id.hashValue) }

    /// Notes `id` as applied.
    public mutating func insert(_ id: String) { insert(id, hash: id.hashValue) }

    /// Notes `id` as applied unless it is noted already; whether it was new. The id is hashed once.
    public mutating func insertIfNew(_ id: String) -> Bool {
        let hash = id.hashValue
        guard !contains(id, hash: hash) else { return false }
        insert(id, hash: hash)
        return true
    }

    /// ``contains(_:)`` with `id.hashValue` computed by the caller.
    func contains(_ id: String, hash: Int) -> Bool {
        ring.contains { $0.hash == hash && $0.id == id }
    }

    /// ``insert(_:)`` with `id.hashValue` computed by the caller.
    mutating func insert(_ id: String, hash: Int) {
        guard ring.count == Self.limit else {
            if ring.isEmpty { ring.reserveCapacity(Self.initialCapacity) }
            ring.append((hash, id))
            return
        }
        ring[oldest] = (hash, id)
        oldest = (oldest + 1) % Self.limit
    }
}

extension RecentEventIds: Hashable {
    public static func == (lhs: RecentEventIds, rhs: RecentEventIds) -> Bool { lhs.ids == rhs.ids }

    public func hash(into hasher: inout Hasher) { hasher.combine(ids) }
}
