import HeapModule

/// A priority queue, smallest first, for elements that mostly come in order: each element no
/// smaller than the last one that came in order is appended to a sorted run, the others go to a
/// heap, and the smallest is the smaller of the run's first and the heap's top.
///
/// The event-time merge buffers records this way: a partition is written roughly in event-time
/// order, so most records come after the one before, and an append and a step along the run cost
/// far less than a heap's logarithm of moves and comparisons of a record's place. Records that come
/// out of order (several writers, a backlog read partition by partition) still cost a logarithm.
struct MostlySortedQueue<Element: Comparable & Sendable>: Sendable {
    /// Ascending from `runFront`; the elements before it have been taken.
    private var run: [Element] = []
    private var runFront = 0
    private var heap = Heap<Element>()

    init() {}

    var count: Int { run.count - runFront + heap.count }

    var isEmpty: Bool { count == 0 }

    /// The smallest element.
    var min: Element? {
        guard runFront < run.count else { return heap.min }
        guard let top = heap.min, top < run[runFront] else { return run[runFront] }
        return top
    }

    mutating func insert(_ element: Element) {
        if let last = run.last, runFront < run.count, element < last {
            heap.insert(element)
        } else {
            run.append(element)
        }
    }

    /// Takes the smallest element out.
    @discardableResult
    mutating func removeMin() -> Element? {
        guard runFront < run.count else { return heap.popMin() }
        if let top = heap.min, top < run[runFront] { return heap.popMin() }
        let element = run[runFront]
        runFront += 1
        if runFront == run.count {
            run.removeAll(keepingCapacity: true)
            runFront = 0
        } else if runFront >= 1_024, runFront * 2 >= run.count {
            run.removeFirst(runFront)
            runFront = 0
        }
        return element
    }
}
