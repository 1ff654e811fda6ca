import Testing

@testable import NotifyPipeline

@Suite struct MostlySortedQueueTests {
    /// Whatever the order of arrival (in order, shuffled, in order with a few out of it, runs
    /// interleaved as several writers make them), each removal takes the smallest element there is,
    /// also while insertions and removals alternate, and every element comes out once.
    @Test(arguments: ["sorted", "shuffled", "mostly sorted", "interleaved runs"])
    func eachRemovalTakesTheSmallest(arrival: String) {
        var generator = SystemRandomNumberGenerator()
        let count = 3_000
        let values: [Int] =
            switch arrival {
            case "sorted": Array(0..<count)
            case "shuffled": Array(0..<count).shuffled(using: &generator)
            case "mostly sorted":
                (0..<count).map { $0 % 17 == 0 ? Int.random(in: 0..<count, using: &generator) : $0 }
            default: (0..<(count / 3)).flatMap { [$0, $0 + 7, $0 + 500] }
            }
        var queue = MostlySortedQueue<Int>()
        /// What the queue holds, sorted: the reference its removals are checked against.
        var held: [Int] = []
        var removed = 0
        func removeMin() {
            let expected = held.removeFirst()
            #expect(queue.min == expected)
            #expect(queue.removeMin() == expected)
            removed += 1
        }
        for (index, value) in values.enumerated() {
            queue.insert(value)
            held.insert(value, at: held.firstIndex { $0 > value } ?? held.count)
            // Every so often, take out what is below a floor, as a release does.
            if index % 100 == 99 {
                while let first = held.first, first < value - 50 { removeMin() }
            }
            #expect(queue.count == held.count)
        }
        while !held.isEmpty { removeMin() }
        #expect(queue.isEmpty && queue.min == nil && queue.removeMin() == nil)
        #expect(removed == values.count)
    }
}
