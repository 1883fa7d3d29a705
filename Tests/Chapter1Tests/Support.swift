import Chapter1
import Foundation
import KataTestSupport
import Synchronization
import Testing

/// Paces the recalculations of one spec and records everything they report.
///
/// Each recalculation run gets its own `Pacer`: a sum stops at every number until the spec
/// lets it go on, so "run 1 is at its last number while run 2 starts" happens every time.
final class SumDriver: Sendable {
    /// Every event the sums reported, in order.
    let events = Recorder<SumEvent>()
    private let pacers = Protected<[Int: Pacer]>([:])
    private let isFree = Protected(false)
    /// How many runs have stopped, counted without a lock.
    ///
    /// A relaxed atomic orders nothing, so a spec that polls it never synchronises with the
    /// sum: ThreadSanitizer then still sees a race between the sum's thread and the poller.
    private let stoppedRuns = Atomic<Int>(0)
    /// How many runs have reached their first number, counted the same way.
    private let startedRuns = Atomic<Int>(0)

    /// Creates a driver; when `paced` is false, no sum ever waits.
    init(paced: Bool = true) {
        isFree.withValue { $0 = !paced }
    }

    /// The probe to hand to `ListAdder` or `AdderOperation`.
    var probe: @Sendable (SumEvent) -> Void {
        { [self] event in
            events.record(event)
            switch event {
            case .willAdd(let run, let index):
                if index == 0 { startedRuns.add(1, ordering: .relaxed) }
                pacer(run).step()
            case .stopped: stoppedRuns.add(1, ordering: .relaxed)
            case .delivered: break
            }
        }
    }

    /// The pacer that holds recalculation `run`.
    func pacer(_ run: Int) -> Pacer {
        let free = isFree.value
        return pacers.withValue { pacers in
            if let pacer = pacers[run] { return pacer }
            let pacer = Pacer()
            if free { pacer.releaseAll() }
            pacers[run] = pacer
            return pacer
        }
    }

    /// Lets every present and future sum run to its end; call it when a spec is done.
    func releaseAll() {
        isFree.withValue { $0 = true }
        for pacer in pacers.value.values { pacer.releaseAll() }
    }

    /// How many numbers run `run` reported adding when it stopped, if it stopped.
    func numbersAdded(by run: Int) -> Int? {
        for case .stopped(run, let added) in events.all { return added }
        return nil
    }

    /// How many runs have stopped so far, read without synchronising with them.
    var stoppedCount: Int {
        stoppedRuns.load(ordering: .relaxed)
    }

    /// How many runs have reached their first number, read without synchronising with them.
    var startedCount: Int {
        startedRuns.load(ordering: .relaxed)
    }

    /// Whether the owner has received the result of run `run`.
    func wasDelivered(_ run: Int) -> Bool {
        events.contains(.delivered(run: run))
    }
}

extension SumDriver {
    /// Why run `run` can reach no further number now: it stopped, or its result already reached
    /// the list's owner; nil while it may still go on.
    func hasEnded(_ run: Int) -> String? {
        if let added = numbersAdded(by: run) {
            return "run \(run) stopped first, after \(added) numbers"
        }
        if wasDelivered(run) {
            return "the result of run \(run) reached the list's owner first"
        }
        return nil
    }

    /// Waits until `condition` holds, giving up as soon as run `run` has ended without it.
    ///
    /// A wait for a run to reach a number cannot succeed once the run is over, so it says so at
    /// once rather than after the whole bound.
    func waitDuringRun(
        _ run: Int,
        until event: @autoclosure () -> String,
        isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) async -> Bool {
        await waitUntil(
            event(),
            hint: "Events: \(events.timeline)",
            givingUpWhen: { hasEnded(run) },
            sourceLocation: sourceLocation,
            condition)
    }

    /// Waits until run `run` has stopped and its result has reached the list's owner.
    ///
    /// Once the run has stopped, its result is on its way: the wait is short, and its failure
    /// says what the model forgot to report.
    func resultReachedOwner(
        run: Int, isolation: isolated (any Actor)? = #isolation, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Bool {
        let stopped = await waitUntil(
            "run \(run) to stop", hint: "Events: \(events.timeline)", sourceLocation: sourceLocation
        ) { numbersAdded(by: run) != nil }
        guard stopped else { return false }
        return await waitUntil(
            "the result of run \(run) to reach the list's owner on the main queue",
            timeout: Bound.scaled(.milliseconds(500)),
            hint: """
                Run \(run) stopped, but the model never reported .delivered(run: \(run)). Report it \
                for every result that comes back to the main queue, also one you then drop as \
                stale or cancelled: the spec needs it to know the model has decided. Events: \
                \(events.timeline)
                \(lesson.see("Never let a stale total win"))
                """,
            sourceLocation: sourceLocation
        ) { wasDelivered(run) }
    }
}

/// One redraw of the total, as the screen saw it.
struct Redraw: Sendable, Equatable, CustomStringConvertible {
    let text: String
    let onMainQueue: Bool

    var description: String { "“\(text)” \(onMainQueue ? "on" : "off") the main queue" }
}

extension ListAdder {
    /// Records every redraw of the total into `screen`.
    func draw(into screen: Recorder<Redraw>) {
        onTotalChange = { text in screen.record(Redraw(text: text, onMainQueue: MainQueue.isCurrent)) }
    }
}

let lesson = Lesson(chapter: 1)

/// Every Chapter 1 suite, run one spec at a time.
///
/// A paced sum blocks a thread of the operation queue. Several specs doing that at once leave
/// Dispatch short of threads on Linux, and it adds more only slowly.
@Suite(.serialized, .watched)
enum Chapter1Specs {}
