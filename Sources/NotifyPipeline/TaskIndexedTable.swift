/// Values by task (a partition number, from 0), in an array grown as a higher task is set, not a
/// hash table: the progress board's tables are read at every release of every task, and a hash table
/// cost a hash per look. A negative task has no value, and setting one does nothing.
struct TaskIndexedTable<Value>: Sequence {
    /// Task → its value (nil: none).
    private var values: [Value?] = []
    /// How many tasks have a value.
    private(set) var count = 0

    init() {}

    /// One past the highest task the table has room for: a ``LocalProgressBoard/TaskSet`` of as many
    /// holds every task with a value.
    var taskCount: Int { values.count }

    subscript(task: Int32) -> Value? {
        get {
            let index = Int(task)
            return index >= 0 && index < values.count ? values[index] : nil
        }
        set {
            let index = Int(task)
            guard index >= 0 else { return }
            if values.count <= index {
                guard newValue != nil else { return }
                values += repeatElement(nil, count: index + 1 - values.count)
            }
            count += (newValue == nil ? 0 : 1) - (values[index] == nil ? 0 : 1)
            values[index] = newValue
        }
    }

    /// The tasks with a value, each with it, in task order.
    func makeIterator() -> Iterator { Iterator(values: values) }

    struct Iterator: IteratorProtocol {
        fileprivate let values: [Value?]
        private var index = 0

        fileprivate init(values: [Value?]) {
            self.values = values
        }

        mutating func next() -> (task: Int32, value: Value)? {
            while index < values.count {
                defer { index += 1 }
                if let value = values[index] { return (Int32(index), value) }
            }
            return nil
        }
    }
}

extension TaskIndexedTable: Sendable where Value: Sendable {}

extension TaskIndexedTable: ExpressibleByDictionaryLiteral {
    init(dictionaryLiteral elements: (Int32, Value)...) {
        for (task, value) in elements { self[task] = value }
    }
}
