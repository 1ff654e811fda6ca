import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords
import Tracing

/// What the runtime does with one device's queue: dedupe, expiry, attempts with backoff, and the
/// outcome (and dead letter) written before the command counts as done.
struct DeliveryProcess: Sendable {
    /// The reason of a `delivered` outcome whose command went out again after an attempt that was
    /// never reported: the platform's replacement key made it replace the earlier copy.
    static let replacementReason = "replacement"

    let sink: any NotificationSink
    let ledger: DeliveryLedger
    let producer: KafkaProducer
    let topics: SinkTopics
    /// The largest record `notify.dlq` takes.
    let deadLetterLimit: DeadLetterLimit
    let retry: RetryPolicy
    let permits: AsyncPermits
    let observer: SinkObserver
    /// Whether each delivery attempt records a span (see ``RecordTracing``).
    let tracing: RecordTracing
    let logger: Logger

    /// Works through `device`'s queue until it is empty.
    func work(_ device: DeviceKey, scheduler: DeliveryScheduler) async {
        var next = await scheduler.next(for: device)
        while let item = next {
            let recorded = await process(item)
            next = await scheduler.finish(item, recorded: recorded, thenNextFor: device)
        }
    }

    /// Returns whether the command is settled (`false`: abandoned because the partition was revoked).
    ///
    /// An attempt holds one of the `permits` until its outcome is acknowledged (not while it
    /// waits for a retry), so at most that many commands are ever between "sent" and "reported".
    private func process(_ item: QueuedCommand) async -> Bool {
        let command = item.command
        if ledger.hasOutcome(command.id) {
            logger.debug("already decided, not delivering again", metadata: ["command": "\(command.id)"])
            return true
        }
        if let token = command.deviceToken, let eventTime = Timestamps.parse(command.at),
            ledger.isInvalidated(token: token, eventTime: eventTime)
        {
            return await report(item, .tokenInvalid, reason: "token-invalidated", token: token)
        }
        guard let expiresAt = Timestamps.parse(command.expiresAt) else {
            return await report(item, .failed, reason: "invalid expiresAt", deadLetter: true)
        }
        let replacing = ledger.wasAttempted(command.id)
        var attempt = 1
        while true {
            if Date() >= expiresAt {
                return await report(item, .expired, reason: "expiresAt passed")
            }
            await permits.acquire()
            guard item.lease.isCurrent, !Task.isCancelled else {
                permits.release()
                return false
            }
            if attempt == 1 {
                // Known to the ledger before anything can reach the device: after a crash from here
                // on, the next owner sends the command again as a replacement, never as a second banner.
                guard await recordAttempt(item) else {
                    permits.release()
                    return false
                }
                if replacing { observer.onReplacement(command.id) }
            }
            let span = attemptSpan(item, attempt: attempt)
            let result = await deliver(
                Delivery(
                    command: command, json: item.record.value, attempt: attempt, replacesEarlierAttempt: replacing),
                in: span)
            let settled: Bool
            switch result {
            case .delivered:
                settled = await report(item, .delivered, reason: replacing ? Self.replacementReason : nil, after: span)
            case .tokenInvalid(let reason, let token):
                settled = await report(item, .tokenInvalid, reason: reason, token: token, after: span)
            case .undeliverableLocal(let reason):
                settled = await report(item, .undeliverableLocal, reason: reason, after: span)
            case .rejected(let reason):
                settled = await report(item, .failed, reason: reason, deadLetter: true, after: span)
            case .retryable(let reason, let retryAfter):
                if attempt >= retry.maxAttempts {
                    settled = await report(
                        item, .failed, reason: "retries exhausted: \(reason)", deadLetter: true, after: span)
                    break
                }
                let delay = retry.delay(afterAttempt: attempt, retryAfter: retryAfter)
                if Date().addingTimeInterval(delay.seconds) >= expiresAt {
                    settled = await report(
                        item, .expired, reason: "expires before the next attempt (\(reason))", after: span)
                    break
                }
                span.end()
                permits.release()
                observer.onRetry(reason)
                logger.debug(
                    "retrying", metadata: ["command": "\(command.id)", "attempt": "\(attempt)", "reason": "\(reason)"])
                guard await pause(delay, lease: item.lease) else { return false }
                attempt += 1
                continue
            }
            span.end()
            permits.release()
            return settled
        }
    }

    /// The span of one delivery attempt of `item`'s command: a child of the span that made the command.
    private func attemptSpan(_ item: QueuedCommand, attempt: Int) -> RecordSpan {
        guard tracing.isOn else { return tracing.continuing(item.record.headers) }
        let span = tracing.startSpan("\(sink.kind) delivery attempt", continuing: item.record.headers, kind: .client)
        span.set("notify.command.id", item.command.id)
        span.set("notify.delivery.attempt", attempt)
        return span
    }

    /// One attempt of the sink kind, inside `span`: the spans the kind starts (its HTTP client's) are its children.
    private func deliver(_ delivery: Delivery, in span: RecordSpan) async -> DeliveryResult {
        let result: DeliveryResult
        if let context = span.context {
            result = await InstrumentationContext.$current.withValue(context) { await sink.deliver(delivery) }
        } else {
            result = await sink.deliver(delivery)
        }
        if tracing.isOn {
            let (name, failure): (String, String?) =
                switch result {
                case .delivered: ("delivered", nil)
                case .tokenInvalid(let reason, _): ("token-invalid", reason)
                case .undeliverableLocal(let reason): ("undeliverable-local", reason)
                case .rejected(let reason): ("rejected", reason)
                case .retryable(let reason, _): ("retryable", reason)
                }
            span.set("notify.delivery.result", name)
            if let failure { span.fail(failure) }
        }
        return result
    }

    /// Writes the `attempting` record of `item` and waits for the broker's acknowledgement.
    private func recordAttempt(_ item: QueuedCommand) async -> Bool {
        let (outcome, record) = outcomeRecord(item, .attempting)
        guard await send([record], lease: item.lease) else { return false }
        ledger.record(LedgerEntry(commandId: item.command.id, outcome: .attempting, at: outcome.at, token: nil))
        return true
    }

    /// The outcome `kind` of `item`'s command, and its record for `notify.outcomes`, continuing the
    /// command's trace: its `traceparent` names the delivery attempt's span when there was one.
    private func outcomeRecord(
        _ item: QueuedCommand, _ kind: NotificationOutcome.Kind, reason: String? = nil, token: String? = nil,
        after attempt: RecordSpan? = nil
    ) -> (NotificationOutcome, OutgoingRecord) {
        let command = item.command
        let outcome = NotificationOutcome(
            id: "\(command.id):\(kind.rawValue)", at: Timestamps.format(Date()), commandId: command.id, sink: sink.kind,
            recipient: command.recipient, conversationId: command.conversationId, messageId: command.messageId,
            outcome: kind, reason: reason, token: token
        )
        let record = OutgoingRecord(
            topic: topics.outcomes, key: Array(command.recipient.userId.utf8), value: CoreJSON.encode(outcome)
        )
        .traced(attempt ?? tracing.continuing(item.record.headers))
        return (outcome, record)
    }

    /// Writes the outcome (and the dead letter) and waits for the broker's acknowledgement.
    private func report(
        _ item: QueuedCommand, _ kind: NotificationOutcome.Kind, reason: String? = nil, token: String? = nil,
        deadLetter: Bool = false, after attempt: RecordSpan? = nil
    ) async -> Bool {
        let command = item.command
        let (outcome, record) = outcomeRecord(item, kind, reason: reason, token: token, after: attempt)
        var records = [record]
        if deadLetter {
            records.append(await deadLetterRecord(item.record, reason: reason ?? kind.rawValue))
        }
        guard await send(records, lease: item.lease) else { return false }
        ledger.record(LedgerEntry(commandId: command.id, outcome: kind, at: outcome.at, token: token))
        observer.onOutcome(outcome)
        if deadLetter { observer.onDeadLetter(item.record.topic) }
        if kind != .delivered {
            logger.info(
                "outcome",
                metadata: ["command": "\(command.id)", "outcome": "\(kind.rawValue)", "reason": "\(reason ?? "")"])
        }
        return true
    }

    /// Dead-letters a record that is not a command at all.
    func deadLetter(_ record: KafkaRecord, reason: String, lease: PartitionLease) async -> Bool {
        logger.warning(
            "dead-lettering",
            metadata: ["partition": "\(record.partition)", "offset": "\(record.offset)", "reason": "\(reason)"])
        guard await send([await deadLetterRecord(record, reason: reason)], lease: lease) else { return false }
        observer.onDeadLetter(record.topic)
        return true
    }

    private func deadLetterRecord(_ record: KafkaRecord, reason: String) async -> OutgoingRecord {
        DeadLetter.record(of: record, reason: reason, topic: topics.deadLetters, fitting: await deadLetterLimit.bytes)
    }

    /// Sends until the broker acknowledges, or the partition is gone.
    private func send(_ records: [OutgoingRecord], lease: PartitionLease) async -> Bool {
        while true {
            do {
                _ = try await producer.send(records)
                return true
            } catch {
                logger.warning("writing an outcome failed, retrying: \(error)")
                guard await pause(.seconds(1), lease: lease) else { return false }
            }
        }
    }

    /// Sleeps `duration` in short steps; `false` as soon as the lease is revoked or the task cancelled.
    private func pause(_ duration: Duration, lease: PartitionLease) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: duration)
        while clock.now < deadline {
            guard lease.isCurrent else { return false }
            do {
                try await Task.sleep(for: min(.milliseconds(50), deadline - clock.now))
            } catch {
                return false
            }
        }
        return lease.isCurrent
    }
}

extension NotificationCommand {
    /// The push token the command goes to, if it has one.
    var deviceToken: String? {
        apns?.token ?? fcm?.message["token"]?.stringValue
    }
}
