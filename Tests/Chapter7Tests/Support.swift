import Chapter7
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 7)

/// A camera card whose copies start when asked and complete only when the spec says so.
///
/// A held copy keeps its import executing without holding a thread, so a spec can fill a queue
/// for as long as it likes.
final class HeldSource: PhotoSource {
    private struct State {
        var started: [String] = []
        var held: [String: @Sendable (Int) -> Void] = [:]
        var running = 0
        var peak = 0
        var queues: [String: ObjectIdentifier] = [:]
    }
    private let state = Protected(State())
    /// Starts and completions as they happen (`IMG_0001 started`, `IMG_0001 completed`).
    let events: Recorder<String>
    /// Runs inside `copy(_:done:)`, after the copy is recorded as started and before the call
    /// returns: the card is being written while it runs. Set by the spec; nil by default.
    let duringCopy = Protected<(@Sendable (String) -> Void)?>(nil)

    /// Creates a card; `events` may be shared with other recorders of the spec.
    init(events: Recorder<String> = Recorder()) {
        self.events = events
    }

    func copy(_ photo: String, done: @escaping @Sendable (Int) -> Void) {
        let current = OperationQueue.current.map(ObjectIdentifier.init)
        state.withValue { state in
            state.started.append(photo)
            state.queues[photo] = current
            state.held[photo] = done
            state.running += 1
            state.peak = max(state.peak, state.running)
            events.record("\(photo) started")
        }
        duringCopy.value?(photo)
    }

    /// The photos whose copy has started, in order.
    var started: [String] { state.value.started }

    /// The photos whose copy has started but not completed.
    var running: [String] { state.value.started.filter { state.value.held[$0] != nil } }

    /// The most copies that were ever running at the same moment.
    var peak: Int { state.value.peak }

    /// Whether the copy of `photo` was started by an operation running on `queue`.
    func wasStarted(_ photo: String, on queue: OperationQueue) -> Bool {
        state.value.queues[photo] == ObjectIdentifier(queue)
    }

    /// Whether the copy of `photo` has started.
    func hasStarted(_ photo: String) -> Bool { started.contains(photo) }

    /// Completes the copy of `photo`, reporting `bytes`; does nothing if it is not running.
    func complete(_ photo: String, bytes: Int = 1_000) {
        let done = state.withValue { state -> (@Sendable (Int) -> Void)? in
            guard let done = state.held.removeValue(forKey: photo) else { return nil }
            state.running -= 1
            events.record("\(photo) completed")
            return done
        }
        done?(bytes)
    }

    /// Completes every copy running now.
    func completeAll() {
        running.forEach { complete($0) }
    }
}

/// A camera card that completes every copy at once.
final class InstantSource: PhotoSource {
    func copy(_ photo: String, done: @escaping @Sendable (Int) -> Void) {
        done(photo.utf8.count)
    }
}

/// A queue that notes the imports the importer hands it and when someone waits for it to empty.
///
/// It can also start its operations on one serial dispatch queue of its own (`serialStarts`),
/// so that `settle()` can tell when every start it has handed out so far has run.
final class WatchedQueue: OperationQueue, @unchecked Sendable {  // adds only locked recorders and a constant
    /// What the queue saw when an import arrived.
    struct HandOff: Sendable {
        let photo: String
        let name: String?
        let hasCompletionBlock: Bool
    }

    /// Every import handed over, in order; other operations the importer adds are not noted.
    let handOffs = Recorder<HandOff>()
    /// How many operations of any kind were handed over.
    let operationsAdded = Protected(0)
    /// Every import handed over, by photo.
    private let imports = Protected<[String: PhotoImport]>([:])
    /// How many times `waitUntilAllOperationsAreFinished` was called.
    let waits = Protected(0)
    /// The serial queue the operations start on, when asked for; kept here because
    /// `underlyingQueue` does not retain it.
    private let starts: DispatchQueue?
    /// Where hand-offs are also written, next to other events of the spec.
    private let log: Recorder<String>?

    /// Every operation handed over, kept until `letGo()`.
    ///
    /// On Linux an operation holds the operations that depend on it without retaining them
    /// (swift-corelibs-foundation), and a cancelled dependent finishes at once: if nothing else
    /// keeps it, an import that finishes later touches freed memory. Kept here, such a design
    /// cannot crash a spec that judges something else; `cancelledBatchEndsOneByOne` judges it.
    private let kept = Protected<[Operation]>([])
    /// Runs once, on the caller's thread, inside the first `isSuspended = true`, before the queue
    /// is suspended: what happens there happens between the caller's line before and the
    /// suspension itself.
    let beforeSuspending = Protected<(@Sendable () -> Void)?>(nil)
    /// Runs once, on the caller's thread, inside the first `cancelAllOperations()`, after the
    /// queue cancelled what it holds and before the call returns.
    let afterCancellingAll = Protected<(@Sendable () -> Void)?>(nil)

    /// Creates a queue; with `serialStarts`, every operation starts on one serial dispatch queue.
    init(serialStarts: Bool = false, log: Recorder<String>? = nil) {
        starts = serialStarts ? DispatchQueue(label: "spec starts") : nil
        self.log = log
        super.init()
        if let starts { underlyingQueue = starts }
    }

    override var isSuspended: Bool {
        get { super.isSuspended }
        set {
            if newValue, let hook = beforeSuspending.withValue({ $0.take() }) { hook() }
            super.isSuspended = newValue
        }
    }

    override func cancelAllOperations() {
        super.cancelAllOperations()
        afterCancellingAll.withValue { $0.take() }?()
    }

    /// Runs on the caller's thread before each hand-off of imports, with their photos, before the
    /// queue holds them: what happens there happens between the importer's line before the
    /// hand-off and the hand-off itself.
    let beforeHandingOver = Protected<(@Sendable ([String]) -> Void)?>(nil)

    /// Holds back every start the queue hands to its serial dispatch queue until `releaseStarts()`.
    ///
    /// An operation the queue decides to start while held starts only once released, so a spec
    /// can let a copy end completely before the queue's next start runs.
    func holdStarts() {
        starts?.suspend()
    }

    /// Lets the starts held by `holdStarts()` run.
    func releaseStarts() {
        starts?.resume()
    }

    /// Drops the operations kept since they were handed over; call it once every import finished.
    func letGo() {
        kept.withValue { $0.removeAll() }
        imports.withValue { $0.removeAll() }
    }

    override func addOperation(_ op: Operation) {
        beforeHandOff([op])
        note([op])
        super.addOperation(op)
        noteUnfinished([op])
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        beforeHandOff(ops)
        note(ops)
        super.addOperations(ops, waitUntilFinished: false)
        noteUnfinished(ops)
        if wait { ops.forEach { $0.waitUntilFinished() } }
    }

    override func waitUntilAllOperationsAreFinished() {
        waits.withValue { $0 += 1 }
        super.waitUntilAllOperationsAreFinished()
    }

    /// The most unfinished imports the queue held right after any hand-off.
    var peakUnfinished: Int {
        unfinishedAtHandOff.value.max() ?? 0
    }

    /// Suspends until every start this queue handed to its serial dispatch queue so far has run.
    ///
    /// The queue hands an operation to Dispatch the moment it decides to start it; a block
    /// enqueued behind those starts runs only after all of them.
    func settle(isolation: isolated (any Actor)? = #isolation) async {
        guard let starts else { return }
        let done = Protected(false)
        starts.async { done.withValue { $0 = true } }
        await waitUntil("the queue's pending starts to run") { done.value }
    }

    /// The import of `photo` this queue was handed, if any.
    func handedImport(_ photo: String) -> PhotoImport? {
        imports.value[photo]
    }

    private let unfinishedAtHandOff = Protected<[Int]>([])

    private func beforeHandOff(_ ops: [Operation]) {
        let photos = ops.compactMap { ($0 as? PhotoImport)?.photo }
        guard !photos.isEmpty, let hook = beforeHandingOver.value else { return }
        hook(photos)
    }

    private func note(_ ops: [Operation]) {
        operationsAdded.withValue { $0 += ops.count }
        kept.withValue { $0 += ops }
        for case let job as PhotoImport in ops {
            imports.withValue { $0[job.photo] = job }
            handOffs.record(
                HandOff(photo: job.photo, name: job.name, hasCompletionBlock: job.completionBlock != nil)
            )
            log?.record("\(job.photo) handed to the queue")
        }
    }

    private func noteUnfinished(_ ops: [Operation]) {
        guard ops.contains(where: { $0 is PhotoImport }) else { return }
        let unfinished = operations.filter { $0 is PhotoImport && !$0.isFinished }.count
        unfinishedAtHandOff.withValue { $0.append(unfinished) }
    }
}

/// The reports an importer delivered, with where each one ran.
final class Reports: Sendable {
    /// One delivered report.
    struct Report: Sendable, CustomStringConvertible {
        let photo: String
        let outcome: ImportOutcome
        /// Whether the report ran on the main queue, asked of the queue itself: under `swift test`
        /// on Linux, `Thread.isMainThread` (and with it `OperationQueue.current`) cannot tell.
        let onMainQueue: Bool

        var description: String { "\(photo): \(outcome)" }
    }

    /// Every report, in the order they arrived.
    let log = Recorder<Report>()

    /// The callback to give `PhotoImporter(onReport:)`.
    var callback: @Sendable (String, ImportOutcome) -> Void {
        { [log] photo, outcome in
            log.record(
                Report(
                    photo: photo,
                    outcome: outcome,
                    onMainQueue: MainQueue.isCurrent
                )
            )
        }
    }

    /// The first report about `photo`, if one arrived.
    func report(for photo: String) -> Report? {
        log.all.first { $0.photo == photo }
    }
}

/// Photo names `IMG_0001` … for `count` photos.
func photos(_ count: Int, from first: Int = 1) -> [String] {
    (first..<(first + count)).map { String(format: "IMG_%04d", $0) }
}

/// What a call to `importAll` made on a thread of its own has done so far.
/// Something only a callback the spec hands to the importer holds, so that the spec can tell
/// whether the importer let go of that callback.
final class CallbackCapture: Sendable {}

struct ImportAllCall: Sendable {
    /// Whether `importAll` has returned.
    let returned = Protected(false)
    /// Whether `importAll` has called `done`.
    let done = Protected(false)
    /// How many times `importAll` has called `done`: once is right, also after a cancel.
    let doneCalls = Protected(0)
    /// An object the `done` handed to `importAll` captures and nothing else holds: it lives as
    /// long as the importer keeps that `done`.
    let doneCapture: WeakReference<CallbackCapture>

    /// Calls `importer.importAll(photos, batchSize:)` on a new thread and returns at once.
    ///
    /// `importAll` must not block, but if it does, it blocks that thread and not the spec,
    /// which may be the one that has to complete the copies it waits for.
    init(_ importer: PhotoImporter, _ photos: [String], batchSize: Int) {
        let (returned, done, doneCalls) = (returned, done, doneCalls)
        let capture = CallbackCapture()
        doneCapture = WeakReference(capture)
        Thread.detachNewThread {
            importer.importAll(photos, batchSize: batchSize) {
                withExtendedLifetime(capture) {}
                doneCalls.withValue { $0 += 1 }
                done.withValue { $0 = true }
            }
            returned.withValue { $0 = true }
        }
    }

    /// Records an issue unless `done` was called exactly once, after a short window in which a
    /// second call could still arrive.
    func expectDoneOnce(
        isolation: isolated (any Actor)? = #isolation,
        _ path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { doneCalls.value > 1 }
        let calls = doneCalls.value
        #expect(
            calls == 1,
            """
            importAll should call done exactly once \(path); it called it \(calls) times. Whoever \
            calls done learns once that the import is over: find the one place where the feeder \
            stops, whether it ran out of photos or heard of cancelAll().
            \(lesson.see("Feed a queue in batches"))
            """,
            sourceLocation: sourceLocation
        )
    }
}

/// Calls `body`, a call into the importer that must return at once, on a thread of its own.
///
/// A call that blocks holds that thread only: its spec fails after `Bound.standard`, naming the
/// call, and the rest of the run goes on. Returns what `body` returned, or nil if it never did;
/// the spec then releases what it holds and stops.
func returning<Value: Sendable>(
    isolation: isolated (any Actor)? = #isolation,
    _ call: String,
    section: String = "Waiting for a queue to empty",
    suspect: String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Value
) async -> Value? {
    await callOnItsOwnThread(
        call,
        hint: """
            \(call) blocked its caller\(suspect). Apart from waitForAll(), every method of the importer hands \
            work over and returns at once: what waits for copies is the queue (a dependency, an \
            operation on another queue, a completion block) or a thread of the importer's own, \
            never the caller's thread, which may be the one that has to finish those copies.
            \(lesson.see(section))
            """,
        sourceLocation: sourceLocation,
        body
    )
}
