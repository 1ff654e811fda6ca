/// The whole core in one process, for `notify render`, `notify replay` and the tests: feeds
/// each event to its stage in event-time order, stage 1's records into stage 2 in the same order,
/// and ends with `.endOfInput`, with the very folds the pipeline runs.
/// Time is event time only: each event advances its own stage's clock.
public struct ScenarioRunner: Sendable {
    /// One event of a scenario, in arrival order.
    public struct Event: Sendable {
        public var topic: String
        public var value: JSONValue

        public init(topic: String, value: JSONValue) {
            self.topic = topic
            self.value = value
        }

        /// The event `milliseconds` later: its `at` and, for preferences, the ends of its mutes
        /// moved, so a scenario replayed at another time means the same (`notify dev` plays its
        /// demo from now, where pushes are not yet past their TTL).
        public func shifted(byMilliseconds milliseconds: Int64) -> Event {
            func later(_ value: JSONValue) -> JSONValue {
                guard case .string(let text) = value, let time = EventTime(rfc3339: text) else { return value }
                return .string(time.adding(milliseconds: milliseconds).rfc3339)
            }
            guard case .object(var members) = value else { return self }
            if let at = members["at"] { members["at"] = later(at) }
            if topic == Topic.preferences, case .object(let muted)? = members["muted"] {
                members["muted"] = .object(muted.mapValues(later))
            }
            return Event(topic: topic, value: .object(members))
        }
    }

    /// An event the core refused: its index in the scenario and why.
    public struct Rejection: Sendable, Hashable, CustomStringConvertible {
        public var index: Int
        public var topic: String
        /// The event's `id`, when it has one.
        public var eventId: String?
        public var reason: String

        public var description: String {
            "events[\(index)] (\(topic)\(eventId.map { ", id \($0)" } ?? "")): \(reason)"
        }
    }

    /// What a scenario produced.
    public struct Result: Sendable {
        public var commands: [NotificationCommand] = []
        public var decisions: [Decision] = []
        public var rejections: [Rejection] = []
    }

    public let fanout: FanoutStage
    public let route: RouteStage

    public init(configuration: CoreConfiguration) {
        fanout = FanoutStage(configuration: configuration)
        route = RouteStage(configuration: configuration)
    }

    /// Runs a scenario `{"events": [{"topic": ..., "value": {...}}, ...]}`.
    /// Throws ``EventDecodingError`` only when the scenario itself is malformed;
    /// bad events are reported as rejections and the rest still runs.
    public func run(scenario bytes: some Collection<UInt8>) throws(EventDecodingError) -> Result {
        run(events: try Self.events(of: bytes))
    }

    /// The events of a scenario file.
    public static func events(of bytes: some Collection<UInt8>) throws(EventDecodingError) -> [Event] {
        do throws(FieldError) {
            let json: JSONValue
            do {
                json = try CoreJSON.parse(bytes)
            } catch {
                let before = Array(bytes.prefix(error.offset))
                let line = before.count { $0 == 0x0A } + 1
                let column = before.count - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
                throw FieldError(field: "line \(line), column \(column)", problem: "invalid JSON: \(error.problem)")
            }
            let fields = try FieldReader(json)
            try fields.rejectUnknown(allowed: ["$schema", "description", "events"])
            return try fields.array("events").map { (element) throws(FieldError) in
                let event = try FieldReader(element.value, path: element.path)
                try event.rejectUnknown(allowed: ["topic", "value"])
                return Event(topic: try event.string("topic"), value: try event.value("value"))
            }
        } catch {
            throw EventDecodingError(topic: "scenario", field: error.field, problem: error.problem)
        }
    }

    /// Runs decoded-later events through both stages, each in event-time order (see ``EventOrder``):
    /// stage 1 folds messages, conversations and identities; stage 2 folds the records stage 1
    /// made with the user tables, reads and outcomes. Events of one key keep their order in the
    /// scenario; how the scenario interleaves keys or topics does not matter.
    public func run(events: [Event]) -> Result {
        var result = Result()
        var fanoutInputs: [(order: EventOrder, index: Int, input: FanoutInput)] = []
        var routeInputs: [(order: EventOrder, sequence: Int, input: RouteInput)] = []
        for (index, event) in events.enumerated() {
            let input: InputEvent
            do {
                input = try InputEvent.decode(topic: event.topic, json: event.value)
            } catch {
                result.rejections.append(
                    Rejection(
                        index: index, topic: event.topic, eventId: event.value["id"]?.stringValue,
                        reason: "field \"\(error.field)\": \(error.problem)"))
                continue
            }
            if let fanoutInput = input.fanoutInput {
                fanoutInputs.append((input.order, index, fanoutInput))
            } else if let routeInput = input.routeInput {
                routeInputs.append((input.order, index, routeInput))
            }
        }

        var fanoutState = FanoutState()
        var records: [FanoutRecord] = []
        func fanoutFold(_ input: FanoutInput, index: Int?) {
            let output = fanout.fold(&fanoutState, input)
            result.decisions += output.decisions
            if let rejection = output.rejection, let index {
                result.rejections.append(
                    Rejection(
                        index: index, topic: events[index].topic,
                        eventId: events[index].value["id"]?.stringValue, reason: rejection))
            }
            records += output.records
        }
        for item in fanoutInputs.sorted(by: { ($0.order, $0.index) < ($1.order, $1.index) }) {
            fanoutFold(item.input, index: item.index)
        }
        fanoutFold(.endOfInput, index: nil)

        // Stage 1's records come after the events (a record of one recipient and conversation keeps
        // the order stage 1 made it in).
        for (sequence, record) in records.enumerated() {
            routeInputs.append((record.order, events.count + sequence, .fanout(record)))
        }
        var routeState = RouteState()
        for item in routeInputs.sorted(by: { ($0.order, $0.sequence) < ($1.order, $1.sequence) }) {
            let output = route.fold(&routeState, item.input)
            result.commands += output.commands
            result.decisions += output.decisions
        }
        let output = route.fold(&routeState, .endOfInput)
        result.commands += output.commands
        result.decisions += output.decisions
        result.rejections.sort { $0.index < $1.index }
        return result
    }
}
