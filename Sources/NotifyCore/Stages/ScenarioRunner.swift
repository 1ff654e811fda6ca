/// The whole core in one process, for `notify render` and the tests: feeds
/// each event to its stage, routes stage 1's records into stage 2 in order,
/// and ends with `.endOfInput`, with the very folds the pipeline runs.
/// Time is event time only: every event advances both stages' clocks.
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

    /// Runs decoded-later events through both stages.
    public func run(events: [Event]) -> Result {
        var result = Result()
        var fanoutState = FanoutState()
        var routeState = RouteState()

        func routeAll(_ inputs: [RouteInput]) {
            for input in inputs {
                let output = route.fold(&routeState, input)
                result.commands += output.commands
                result.decisions += output.decisions
            }
        }
        func fanoutAll(_ input: FanoutInput, index: Int?, topic: String) {
            let output = fanout.fold(&fanoutState, input)
            result.decisions += output.decisions
            if let rejection = output.rejection, let index {
                result.rejections.append(Rejection(index: index, topic: topic, eventId: events[index].value["id"]?.stringValue, reason: rejection))
            }
            routeAll(output.records.map(RouteInput.fanout))
        }

        for (index, event) in events.enumerated() {
            let input: InputEvent
            do {
                input = try InputEvent.decode(topic: event.topic, json: event.value)
            } catch {
                result.rejections.append(Rejection(index: index, topic: event.topic, eventId: event.value["id"]?.stringValue,
                                                   reason: "field \"\(error.field)\": \(error.problem)"))
                continue
            }
            if let fanoutInput = input.fanoutInput {
                fanoutAll(fanoutInput, index: index, topic: event.topic)
                routeAll([.clock(input.at)])
            } else if let routeInput = input.routeInput {
                fanoutAll(.clock(input.at), index: nil, topic: event.topic)
                routeAll([routeInput])
            }
        }
        fanoutAll(.endOfInput, index: nil, topic: "")
        routeAll([.endOfInput])
        return result
    }
}
