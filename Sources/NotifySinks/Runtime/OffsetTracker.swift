/// The offsets of one partition between "read" and "done": what may be committed is the lowest
/// offset not done yet (or one past the last read when all are done), so a command still being
/// retried holds its partition's commit back but nothing else.
struct OffsetTracker: Sendable {
    private var pending: [Int64] = []
    private var head = 0
    private var done: Set<Int64> = []
    private var nextUnread: Int64?

    /// A record was read.
    mutating func read(_ offset: Int64) {
        pending.append(offset)
        nextUnread = offset + 1
    }

    /// A record's work is finished (its outcome acknowledged, or nothing to do).
    mutating func finish(_ offset: Int64) {
        done.insert(offset)
        while head < pending.count, done.remove(pending[head]) != nil {
            head += 1
        }
        if head > 1024, head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }

    /// The offset to commit (the next to read after a restart), or `nil` before anything was read.
    var committable: Int64? {
        head < pending.count ? pending[head] : nextUnread
    }
}
