/// Bytes a `JSONWriter` wrote, handed over without a copy; never changed
/// afterwards, so values in different tasks may share them.
struct WrittenJSON: @unchecked Sendable {
    /// The bytes live in the object itself (one allocation, not an object and
    /// a buffer); the header is how many of them were written.
    final class Storage: ManagedBuffer<Int, UInt8> {}

    let storage: Storage

    /// An empty buffer with room for at least `capacity` bytes, for a writer to fill.
    static func allocate(capacity: Int) -> Storage {
        unsafeDowncast(Storage.create(minimumCapacity: capacity) { _ in 0 }, to: Storage.self)
    }

    /// Takes over what a writer wrote into `storage`.
    init(_ storage: Storage) {
        self.storage = storage
    }

    /// A copy of `bytes`.
    init(copying bytes: UnsafeBufferPointer<UInt8>) {
        storage = Self.allocate(capacity: bytes.count)
        storage.withUnsafeMutablePointers { count, start in
            if let base = bytes.baseAddress { start.initialize(from: base, count: bytes.count) }
            count.pointee = bytes.count
        }
    }

    /// The number of bytes written. (Read through the pointer: reading `header`
    /// as a property costs a dynamic exclusivity check, which showed in the builder's profile.)
    var count: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee } }

    /// `range` of the bytes; valid while `storage` lives.
    func buffer(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        storage.withUnsafeMutablePointers { count, start in
            precondition(range.lowerBound >= 0 && range.upperBound <= count.pointee)
            return UnsafeBufferPointer(start: start + range.lowerBound, count: range.count)
        }
    }
}
