import Testing
@testable import Kafka

@Suite struct KafkaErrorTests {
    @Test func describesItsCode() {
        let error = KafkaError.client("bad")
        #expect(error.description.contains("bad"))
    }
}
