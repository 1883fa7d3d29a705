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

    func copy(_ photo: String, done: @escaping @Sendable (Int) -> Void) {
        let current = OperationQueue.current.map(ObjectIdentifier.init)
        state.withValue { state in
            state.started.append(photo)
            state.queues[photo] = current
            state.held[photo] = done
            state.running += 1
            state.peak = max(state.peak, state.running)
        }
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

/// A queue that notes what the importer hands it and when someone waits for it to empty.
final class WatchedQueue: OperationQueue, @unchecked Sendable {  // adds only locked recorders
    /// What the queue saw when an import arrived.
    struct HandOff: Sendable {
        let name: String?
        let hasCompletionBlock: Bool
        /// How many operations the queue held that had not finished, this one included.
        let unfinished: Int
    }

    /// Every operation handed over, in order.
    let handOffs = Recorder<HandOff>()
    /// How many times `waitUntilAllOperationsAreFinished` was called.
    let waits = Protected(0)

    override func addOperation(_ op: Operation) {
        super.addOperation(op)
        note([op])
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        super.addOperations(ops, waitUntilFinished: false)
        note(ops)
        if wait { ops.forEach { $0.waitUntilFinished() } }
    }

    override func waitUntilAllOperationsAreFinished() {
        waits.withValue { $0 += 1 }
        super.waitUntilAllOperationsAreFinished()
    }

    /// The most unfinished operations the queue held right after any hand-off.
    var peakUnfinished: Int {
        handOffs.all.map(\.unfinished).max() ?? 0
    }

    private func note(_ ops: [Operation]) {
        let unfinished = operations.filter { !$0.isFinished }.count
        for op in ops {
            handOffs.record(
                HandOff(
                    name: op.name,
                    hasCompletionBlock: op.completionBlock != nil,
                    unfinished: unfinished
                )
            )
        }
    }
}

/// The reports an importer delivered, with where each one ran.
final class Reports: Sendable {
    /// One delivered report.
    struct Report: Sendable, CustomStringConvertible {
        let photo: String
        let outcome: ImportOutcome
        let onMainQueue: Bool
        let currentIsMain: Bool

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
                    onMainQueue: MainQueue.isCurrent,
                    currentIsMain: OperationQueue.current === OperationQueue.main
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
