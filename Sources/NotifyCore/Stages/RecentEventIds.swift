/// The ids of the last events applied to one key, to recognise an event that comes again (an
/// at-least-once producer's duplicate). Kept in the key's changelog record.
///
/// Every event of a stage is looked up here and most are then noted, so both are cheap: the ids sit
/// in a ring (noting one overwrites the oldest, nothing is shifted), each with its hash, which is
/// compared before the id itself.
public struct RecentEventIds: Sendable {
    /// The ids in a ring: the oldest at `oldest` once the ring is full, else at 0.
    private var ring: [String] = []
    /// `ring[i].hashValue`, for the look-up's first comparison (this process's hashes: never stored).
    private var hashes: [Int] = []
    private var oldest = 0
    /// How many ids are remembered.
    public static let limit = 32

    public init(_ ids: [String] = []) {
        for id in ids.suffix(Self.limit) { insert(id) }
    }

    /// Oldest first.
    public var ids: [String] { Array(ring[oldest...] + ring[..<oldest]) }

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
        for index in hashes.indices where hashes[index] == hash && ring[index] == id { return true }
        return false
    }

    /// ``insert(_:)`` with `id.hashValue` computed by the caller.
    mutating func insert(_ id: String, hash: Int) {
        guard ring.count == Self.limit else {
            ring.append(id)
            hashes.append(hash)
            return
        }
        ring[oldest] = id
        hashes[oldest] = hash
        oldest = (oldest + 1) % Self.limit
    }
}

extension RecentEventIds: Hashable {
    public static func == (lhs: RecentEventIds, rhs: RecentEventIds) -> Bool { lhs.ids == rhs.ids }

    public func hash(into hasher: inout Hasher) { hasher.combine(ids) }
}
