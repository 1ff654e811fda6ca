/// A value's members behind one reference, copied when changed while shared.
///
/// Contents and commands are copied into records, outputs, batches and
/// remembered deliveries; with their members in one of these, a copy is one
/// reference instead of every string and rendering they hold.
struct CopyOnWrite<Members: Hashable & Sendable>: Hashable, Sendable {
    /// Changed only by ``update(_:)``, which first copies a shared box, so no
    /// box is ever changed while another value holds it. Reads and that one
    /// writer cannot overlap, so the runtime's access checks (one per read of
    /// any member) are left out.
    private final class Box: @unchecked Sendable {
        @exclusivity(unchecked) var members: Members

        init(_ members: Members) {
            self.members = members
        }
    }

    private var box: Box

    init(_ members: Members) {
        box = Box(members)
    }

    @inline(__always)
    var members: Members { box.members }

    /// Changes the members, in place when no other value shares them.
    mutating func update(_ change: (inout Members) -> Void) {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.members) }
        change(&box.members)
    }

    static func == (lhs: CopyOnWrite, rhs: CopyOnWrite) -> Bool {
        lhs.box === rhs.box || lhs.box.members == rhs.box.members
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(box.members)
    }
}
