import Chapter3
import Dispatch
import Foundation
import KataTestSupport
import Testing

/// Where the failure messages of this chapter point.
let lesson = Lesson(chapter: 3)

/// One step in an operation's life, as a spec saw it.
enum Moment: Equatable, Sendable, CustomStringConvertible {
    case startReturned
    case workPaused
    case workOffItsQueue
    case workSkipped
    case gateOpened
    case workResumed
    case workInterrupted
    case pauseGaveUp
    case cancelCalled
    case finishedSeen
    case sentinelRan
    case completionRan
    case nextRan
    case laterOperationRan
    case dependencyRan
    case dependencyReleased
    case workQueueDrained
    case mainRan(executing: Bool)
    case announced(Announcement)
    case readerReturned(executing: Bool, finished: Bool, executingAgain: Bool)

    var description: String {
        switch self {
        case .startReturned: "start returned"
        case .workPaused: "work began (paused at the gate)"
        case .workOffItsQueue: "work ran off the queue it was given"
        case .workSkipped: "work queue reached the greeting's work"
        case .gateOpened: "gate opened"
        case .workResumed: "work resumed"
        case .workInterrupted: "pause ended by the cancellation"
        case .pauseGaveUp: "the gate gave up holding the work (no spec holds it this long)"
        case .cancelCalled: "cancel() called"
        case .finishedSeen: "isFinished true"
        case .sentinelRan: "sentinel ran"
        case .completionRan: "completion block ran"
        case .nextRan: "next operation ran"
        case .laterOperationRan: "an operation added later ran"
        case .dependencyRan: "dependency ran"
        case .dependencyReleased: "dependency started by hand"
        case .workQueueDrained: "work queue drained"
        case .mainRan(let executing): "main() was called (isExecuting \(executing))"
        case .announced(let announcement): "\(announcement)"
        case .readerReturned(let executing, let finished, let again):
            "reader on another thread read isExecuting \(executing), isFinished \(finished), isExecuting \(again)"
        }
    }
}

/// A will/did change notification for `isExecuting` or `isFinished`, with the value read back at "did".
struct Announcement: Equatable, Sendable, CustomStringConvertible {
    enum Key: String, Sendable {
        case isExecuting, isFinished
    }
    let key: Key
    /// True for the "will" half; "will" is seen only on Darwin.
    var isWill = false
    /// The value the property returned when the announcement read it back ("did" only).
    var value = false

    var description: String {
        isWill ? "will change \(key.rawValue)" : "announced \(key.rawValue) \(value)"
    }
}

/// A serial queue owned by one spec, which can tell whether code is running on it.
final class WorkQueue: Sendable {
    /// The queue itself, to hand to the operation under test.
    let queue = DispatchQueue(label: "Chapter3Tests.work")
    private let key = DispatchSpecificKey<Bool>()

    /// Creates the queue and marks it.
    init() {
        queue.setSpecific(key: key, value: true)
    }

    /// Whether the calling code runs on this queue.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) ?? false
    }
}

/// The greeting's "processing": it waits until the spec opens it, or ends early when the greeting is cancelled.
///
/// Like a network request that stops when cancelled, so that a design where the work notices the
/// cancellation and finishes can be tested.
final class Pause: @unchecked Sendable {  // `state` is only touched under `condition`
    enum Outcome { case opened, interrupted, timedOut }
    private let condition = NSCondition()
    private var state = (opened: false, interrupted: false)  // protected by condition

    /// Creates a pause, already open if `open` is true.
    init(open: Bool = false) {
        state.opened = open
    }

    /// Lets the work go on.
    func open() {
        condition.withLock {
            state.opened = true
            condition.broadcast()
        }
    }

    /// Ends the pause because the greeting was cancelled.
    func interrupt() {
        condition.withLock {
            state.interrupted = true
            condition.broadcast()
        }
    }

    /// Blocks until opened or interrupted; gives up after a bound that outlasts every wait in a spec.
    func wait() -> Outcome {
        let deadline = Date.now.addingTimeInterval((Bound.standard * 2).timeInterval)
        return condition.withLock {
            while !state.opened && !state.interrupted {
                if !condition.wait(until: deadline) { return .timedOut }
            }
            return state.opened ? .opened : .interrupted
        }
    }
}

/// A greeting that records its lifecycle and its announcements, and pauses until the spec opens the pause.
final class TracedGreeting: GreetingOperation, @unchecked Sendable {  // every stored property is immutable and Sendable
    let trace: Recorder<Moment>
    let work: WorkQueue
    let pause: Pause
    /// Every announcement of isExecuting and isFinished, in order.
    let announcements = Recorder<Announcement>()
    private let waitsForQuickWork: Bool
    private let onAnnouncement: @Sendable (Announcement) -> Void
    #if canImport(Darwin)
        private let observer = NotificationObserver()
    #endif

    /// - Parameters:
    ///   - waitsForQuickWork: `execute()` returns only once the work has ended (within a bound), so
    ///     the work ends before `start()` returns; for work that ends at once.
    ///   - onAnnouncement: Called on the announcing thread, for each announcement, before it goes on.
    init(
        person: String = "Ada",
        trace: Recorder<Moment>,
        pause: Pause = Pause(),
        work: WorkQueue = WorkQueue(),
        waitsForQuickWork: Bool = false,
        onAnnouncement: @escaping @Sendable (Announcement) -> Void = { _ in }
    ) {
        self.trace = trace
        self.work = work
        self.pause = pause
        self.waitsForQuickWork = waitsForQuickWork
        self.onAnnouncement = onAnnouncement
        super.init(person: person, queue: work.queue) {
            if !work.isCurrent { trace.record(.workOffItsQueue) }
            trace.record(.workPaused)
            switch pause.wait() {
            case .opened: trace.record(.workResumed)
            case .interrupted: trace.record(.workInterrupted)
            case .timedOut: trace.record(.pauseGaveUp)
            }
        }
        #if canImport(Darwin)
            observer.start(observing: self) { [announcements, onAnnouncement, trace] announcement in
                announcements.record(announcement)
                if !announcement.isWill { trace.record(.announced(announcement)) }
                onAnnouncement(announcement)
            }
        #else
            if !AnnouncementSite.isAvailable {
                Issue.record(
                    """
                    The kata's Linux announcement probe no longer recognises Foundation's read-back \
                    of isExecuting and isFinished, so no announcement can be seen. This is the \
                    kata's fault, not your code's: tell its maintainers (Tests/Chapter3Tests/AnnouncementProbe.swift).
                    """)
            }
        #endif
    }

    #if canImport(Darwin)
        deinit {
            observer.stop(observing: self)
        }
    #endif

    /// Calls the greeting's own `start()`, then notes that it returned.
    override func start() {
        super.start()
        trace.record(.startReturned)
    }

    /// Notes that `main()` ran; the inherited `start()` calls it at once.
    override func main() {
        trace.record(.mainRan(executing: isExecuting))
        super.main()
    }

    /// Launches the work; with `waitsForQuickWork`, returns once the work has ended.
    override func execute() {
        super.execute()
        guard waitsForQuickWork, !work.isCurrent else { return }
        let ended = DispatchSemaphore(value: 0)
        work.queue.async { ended.signal() }
        _ = ended.wait(timeout: .now() + Bound.scaled(.milliseconds(300)).timeInterval)
    }

    /// Cancels, then ends the pause, as a cancellable request would.
    override func cancel() {
        super.cancel()
        pause.interrupt()
    }

    override var isFinished: Bool {
        let value = super.isFinished
        #if !canImport(Darwin)
            if AnnouncementSite.isAnnouncing(.isFinished) { heard(Announcement(key: .isFinished, value: value)) }
        #endif
        if !value { raceWindow.checked() }
        return value
    }

    override var isExecuting: Bool {
        let value = super.isExecuting
        #if !canImport(Darwin)
            if AnnouncementSite.isAnnouncing(.isExecuting) { heard(Announcement(key: .isExecuting, value: value)) }
        #endif
        if value { raceWindow.checked() }
        return value
    }

    /// A start() reads this before it launches: on a racing thread, a rival call runs here.
    override var isCancelled: Bool {
        let value = super.isCancelled
        if !value { raceWindow.checked() }
        return value
    }

    // MARK: Two calls at once

    /// Lets a second finish() or start() in between the first one's check of the state and its change.
    let raceWindow = RaceWindow()

    private func heard(_ announcement: Announcement) {
        announcements.record(announcement)
        trace.record(.announced(announcement))
        onAnnouncement(announcement)
    }

    /// The values announced for `key` ("did" only), in order.
    func announced(_ key: Announcement.Key) -> [Bool] {
        announcements.all.filter { $0.key == key && !$0.isWill }.map(\.value)
    }
}

#if canImport(Darwin)
    /// Records the will/did change notifications an operation sends, as Darwin lets a spec observe them.
    ///
    /// It observes the key paths "isExecuting" and "isFinished": notifications sent under another key
    /// (such as "finished") never reach it, just as they never reach a queue on Darwin.
    final class NotificationObserver: NSObject, @unchecked Sendable {  // `handler` is set once, before observing
        private static let keys: [Announcement.Key] = [.isExecuting, .isFinished]
        private var handler: @Sendable (Announcement) -> Void = { _ in }

        func start(observing operation: Operation, handler: @escaping @Sendable (Announcement) -> Void) {
            self.handler = handler
            for key in Self.keys {
                operation.addObserver(self, forKeyPath: key.rawValue, options: [.prior, .new], context: nil)
            }
        }

        func stop(observing operation: Operation) {
            for key in Self.keys {
                operation.removeObserver(self, forKeyPath: key.rawValue)
            }
        }

        override func observeValue(
            forKeyPath keyPath: String?,
            of object: Any?,
            change: [NSKeyValueChangeKey: Any]?,
            context: UnsafeMutableRawPointer?
        ) {
            guard let key = keyPath.flatMap(Announcement.Key.init(rawValue:)) else { return }
            if (change?[.notificationIsPriorKey] as? Bool) == true {
                handler(Announcement(key: key, isWill: true))
            } else {
                handler(Announcement(key: key, value: (change?[.newKey] as? Bool) ?? false))
            }
        }
    }
#endif

/// A block operation that records `moment` when it runs.
func sentinel(_ trace: Recorder<Moment>, records moment: Moment = .sentinelRan) -> BlockOperation {
    BlockOperation { trace.record(moment) }
}

/// Says why something that the end of the work should cause can no longer be expected.
///
/// Once the work's queue has run everything enqueued so far and a grace period has passed, an
/// announcement that was going to come has come: a dependent, completion block or next operation
/// still missing then is missing for good.
final class WorkEnd: Sendable {
    private let drainedAt = Protected<ContinuousClock.Instant?>(nil)

    /// Starts watching: notes when `work` has run everything enqueued before this call.
    init(of work: WorkQueue, trace: Recorder<Moment>) {
        work.queue.async { [drainedAt] in
            trace.record(.workQueueDrained)
            drainedAt.withValue { $0 = .now }
        }
    }

    /// A reason to give up once the work ended `grace` ago; nil before that.
    func verdict(grace: Duration = Bound.scaled(.milliseconds(250))) -> String? {
        guard let drained = drainedAt.value, ContinuousClock.now - drained > grace else { return nil }
        return "the greeting's work had ended and nothing else was coming"
    }
}

/// Waits until the greeting's work queue has run everything sent to it so far, so that whatever a
/// later `start()` launched there has run.
///
/// - Returns: Whether it did so in time; if not, an issue says so.
func waitForWorkQueue(
    of greeting: TracedGreeting,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    let drained = Protected(false)
    greeting.work.queue.async { drained.withValue { $0 = true } }
    return await waitUntil(
        "the greeting's work queue to run what was sent to it", hint: lesson.see("Steps"),
        sourceLocation: sourceLocation, { drained.value })
}

/// Makes `call` twice at the same moment through the greeting's race window, the second just
/// after the first one checked the state, and waits, bounded, for both to return.
///
/// - Returns: Whether both returned in time; if not, an issue names `name`.
func callTwiceAtOnce(
    _ greeting: TracedGreeting,
    _ name: String,
    hint: String,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ call: @escaping @Sendable () -> Void
) async -> Bool {
    let returned = Protected(0)
    let calling: @Sendable () -> Void = {
        call()
        returned.withValue { $0 += 1 }
    }
    greeting.raceWindow.race(calling, against: calling)
    return await waitUntil(
        "both \(name) calls to return", hint: hint, sourceLocation: sourceLocation, { returned.value == 2 })
}

/// Waits until `start()` has returned and the work is paused at its gate.
///
/// - Returns: Whether both happened in time; if not, an issue names the step that never came.
@discardableResult
func waitForPause(
    isolation: isolated (any Actor)? = #isolation,
    _ greeting: TracedGreeting,
    see section: String = "Steps",
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    let trace = greeting.trace
    // The gate holds the work longer than this wait lasts; a start() that returned only once the
    // gate gave up waited for the work, however late this spec's task got to look.
    let returnedWhileHeld = {
        trace.contains(.startReturned) && trace.contains(.workPaused)
            && (trace.all.firstIndex(of: .pauseGaveUp).map { gaveUp in
                trace.all.firstIndex(of: .startReturned).map { $0 < gaveUp } ?? false
            } ?? true)
    }
    return await waitUntil(
        "start() to return and the work to pause at the gate",
        hint: trace.lifecycle(missing: "start never returned or the work never began") + "\n"
            + lesson.see(section),
        givingUpWhen: {
            if trace.contains(.pauseGaveUp) {
                return "start() returned only after the gate stopped holding the work: it waits for the work it starts"
            }
            return greeting.isFinished ? "the greeting finished without pausing" : nil
        },
        sourceLocation: sourceLocation,
        returnedWhileHeld)
}

/// Waits until `start()` has returned and the work is paused, then opens the pause.
///
/// The work ends only after `start()` returned, so only an announcement can tell the world it is over.
/// - Returns: Whether both happened in time.
@discardableResult
func releaseAfterStartReturned(
    isolation: isolated (any Actor)? = #isolation,
    _ greeting: TracedGreeting,
    see section: String,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    guard await waitForPause(greeting, see: section, sourceLocation: sourceLocation) else { return false }
    greeting.trace.record(.gateOpened)
    greeting.pause.open()
    return true
}

/// Waits for `greeting` to report finished and notes that moment in its trace.
///
/// - Returns: Whether it did so in time.
@discardableResult
func waitForFinished(
    _ greeting: TracedGreeting,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    let end = WorkEnd(of: greeting.work, trace: greeting.trace)
    let finished = await waitUntil(
        "isFinished to turn true",
        hint: greeting.trace.lifecycle(missing: "isFinished never turned true") + "\n"
            + lesson.see("Finish once, on every path"),
        givingUpWhen: { end.verdict() },
        sourceLocation: sourceLocation
    ) { greeting.isFinished }
    if finished { greeting.trace.record(.finishedSeen) }
    return finished
}

/// Waits for `moment`, which the end of the greeting's work should cause, giving up soon after the work ended.
@discardableResult
func waitForEffect(
    isolation: isolated (any Actor)? = #isolation,
    _ moment: Moment,
    of greeting: TracedGreeting,
    _ event: String,
    why: String,
    see section: String = "Announce every change, after the flag flips",
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    let end = WorkEnd(of: greeting.work, trace: greeting.trace)
    return await waitUntil(
        event,
        hint: greeting.trace.lifecycle(missing: "\(moment) never happened") + "\n" + why + "\n" + lesson.see(section),
        givingUpWhen: { end.verdict() },
        sourceLocation: sourceLocation
    ) { greeting.trace.contains(moment) }
}

/// Notes when a condition first held, to give up a grace period after it.
final class Settle: Sendable {
    private let since = Protected<ContinuousClock.Instant?>(nil)

    /// Whether `condition` has held for `grace`, counting from the first call that saw it true.
    func passed(since condition: Bool, grace: Duration = Bound.scaled(.milliseconds(250))) -> Bool {
        guard condition else { return false }
        let first = since.withValue { start in
            if start == nil { start = .now }
            return start!
        }
        return ContinuousClock.now - first > grace
    }
}
