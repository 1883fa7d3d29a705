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
    case gateOpened
    case workResumed
    case cancelCalled
    case finishedSeen
    case sentinelRan
    case completionRan
    case nextRan
    case laterOperationRan
    case dependencyRan
    case dependencyReleased
    case workQueueDrained
    case announcing
    case announcementReleased
    case readerReturned(executing: Bool, finished: Bool)

    var description: String {
        switch self {
        case .startReturned: "start returned"
        case .workPaused: "work began (paused at the gate)"
        case .workOffItsQueue: "work ran off the queue it was given"
        case .gateOpened: "gate opened"
        case .workResumed: "work resumed"
        case .cancelCalled: "cancel() called"
        case .finishedSeen: "isFinished true"
        case .sentinelRan: "sentinel ran"
        case .completionRan: "completion block ran"
        case .nextRan: "next operation ran"
        case .laterOperationRan: "an operation added later ran"
        case .dependencyRan: "dependency ran"
        case .dependencyReleased: "dependency started by hand"
        case .workQueueDrained: "work queue drained"
        case .announcing: "isFinished announced (finishing thread paused)"
        case .announcementReleased: "announcement allowed to go on"
        case .readerReturned(let executing, let finished):
            "reader on another thread read isExecuting \(executing), isFinished \(finished)"
        }
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

/// A greeting that records its lifecycle and pauses at a gate the spec opens.
///
/// `readBack` is called whenever something on the work queue reads `isFinished`: announcing the
/// change (`didChangeValue`) reads the property back on the announcing thread.
final class TracedGreeting: GreetingOperation, @unchecked Sendable {  // every stored property is immutable and Sendable
    let trace: Recorder<Moment>
    let work: WorkQueue
    private let readBack: @Sendable (Bool) -> Void

    init(
        trace: Recorder<Moment>,
        gate: Gate,
        work: WorkQueue = WorkQueue(),
        readBack: @escaping @Sendable (Bool) -> Void = { _ in }
    ) {
        self.trace = trace
        self.work = work
        self.readBack = readBack
        super.init(person: "Ada", queue: work.queue) {
            if !work.isCurrent { trace.record(.workOffItsQueue) }
            trace.record(.workPaused)
            gate.wait(timeout: Bound.standard * 2)  // outlasts every wait in the spec; opened when it ends
            trace.record(.workResumed)
        }
    }

    /// Calls the greeting's own `start()`, then notes that it returned.
    override func start() {
        super.start()
        trace.record(.startReturned)
    }

    override var isFinished: Bool {
        let finished = super.isFinished
        if work.isCurrent { readBack(finished) }
        return finished
    }
}


/// A block operation that records `moment` when it runs.
func sentinel(_ trace: Recorder<Moment>, records moment: Moment = .sentinelRan) -> BlockOperation {
    BlockOperation { trace.record(moment) }
}

/// Waits until `start()` has returned and the work is paused at its gate.
///
/// - Returns: Whether both happened in time; if not, an issue names the step that never came.
@discardableResult
func waitForPause(
    isolation: isolated (any Actor)? = #isolation,
    _ trace: Recorder<Moment>,
    see section: String = "The steps",
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    await waitUntil(
        "start() to return and the work to pause at the gate",
        hint: trace.lifecycle(missing: "start never returned or the work never began") + "\n"
            + lesson.see(section),
        sourceLocation: sourceLocation,
        { trace.contains(.startReturned) && trace.contains(.workPaused) })
}

/// Waits until `start()` has returned and the work is paused at its gate, then opens the gate.
///
/// The work ends only after `start()` returned, so only an announcement can tell the world it is over.
/// - Returns: Whether both happened in time.
@discardableResult
func releaseAfterStartReturned(
    isolation: isolated (any Actor)? = #isolation,
    _ trace: Recorder<Moment>,
    _ gate: Gate,
    see section: String,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    guard await waitForPause(trace, see: section, sourceLocation: sourceLocation) else { return false }
    trace.record(.gateOpened)
    gate.open()
    return true
}

/// Waits for `operation` to report finished and notes that moment in `trace`.
func waitForFinished(
    _ operation: Operation,
    _ trace: Recorder<Moment>,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let finished = await waitUntil(
        "isFinished to turn true", hint: lesson.see("Finish once, on every path"),
        sourceLocation: sourceLocation
    ) { operation.isFinished }
    if finished { trace.record(.finishedSeen) }
}

#if canImport(Darwin)
    /// Records the will/did change notifications an operation sends; Darwin lets a spec observe them.
    final class Announcements: NSObject, @unchecked Sendable {  // `log` is thread-safe; `observed` is immutable
        let log = Recorder<String>()
        private let observed: Operation
        private static let keys = ["isExecuting", "isFinished"]

        init(of operation: Operation) {
            observed = operation
            super.init()
            for key in Self.keys {
                operation.addObserver(self, forKeyPath: key, options: [.prior, .new], context: nil)
            }
        }

        /// Stops observing; call before the spec ends.
        func stop() {
            for key in Self.keys {
                observed.removeObserver(self, forKeyPath: key)
            }
        }

        /// How many "did change" notifications were sent for `key`.
        func didChanges(of key: String) -> Int {
            log.all.filter { $0.hasPrefix("did \(key) ") }.count
        }

        override func observeValue(
            forKeyPath keyPath: String?,
            of object: Any?,
            change: [NSKeyValueChangeKey: Any]?,
            context: UnsafeMutableRawPointer?
        ) {
            let key = keyPath ?? "?"
            if (change?[.notificationIsPriorKey] as? Bool) == true {
                log.record("will \(key)")
            } else {
                let value = (change?[.newKey] as? Bool).map { "\($0)" } ?? "?"
                log.record("did \(key) \(value)")
            }
        }
    }
#endif
