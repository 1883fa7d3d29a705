import Chapter11
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 11)

/// How long a scenario waits for what correct code does within milliseconds.
let patience = Bound.scaled(.milliseconds(500))

/// A new operation queue for one engine of a spec that runs in the shared test process.
///
/// Only exit tests, where the engine is alone in its process, make engines with the default
/// queue. A default made once and handed to every engine (a `static`) would be shared by the
/// engines of every spec running beside it: one spec's `open(_:)` would set the underlying queue
/// of a queue holding another spec's jobs, which stops the whole process
/// (swift-corelibs-foundation, `fatalError`), and every other spec's verdict with it.
func queueOfItsOwn() -> OperationQueue {
    OperationQueue()
}

/// Says why `jobs` that have not finished never will, or nil while they still can.
///
/// They never will once each waits, unstarted, in `queue` while it is suspended: a suspended
/// queue starts nothing, and a cancelled operation in a queue finishes only once the queue starts
/// it. Only the engine could still resume the queue; a spec asks this once it calls the engine no
/// more, and an engine that keeps its jobs in a suspended queue until `open(_:)` breaks C75
/// anyway (the queue's underlying queue can be set only while it is empty).
func stuck(_ jobs: [Operation], in queue: OperationQueue?) -> String? {
    guard let queue, queue.isSuspended else { return nil }
    let unfinished = jobs.filter { !$0.isFinished }
    let held = Set(queue.operations.map(ObjectIdentifier.init))
    guard !unfinished.isEmpty, unfinished.allSatisfy({ held.contains(ObjectIdentifier($0)) && !$0.isExecuting })
    else { return nil }
    let names = unfinished.map { $0.name ?? "an operation" }
    return """
        \(names.joined(separator: ", ")) \(names.count == 1 ? "waits" : "wait") in the engine's \
        queue, which is suspended and so starts nothing: a cancelled operation in a queue finishes \
        only once the queue starts it
        """
}

/// The notes called `titles`.
func notes(_ titles: String...) -> [Note] {
    titles.map { Note($0) }
}

/// A note store that records every save: which note, and where it ran.
///
/// `hold()` suspends the store's dispatch queue, so that work handed to it waits there without
/// holding any thread, as it would behind a long write; `release()` lets it run.
final class Desk: NoteStore {
    /// One call of `save(_:)`.
    struct Save: Sendable, CustomStringConvertible {
        let title: String
        /// Whether it ran on the store's own dispatch queue.
        let onTheStoreQueue: Bool
        /// Whether it ran inside an operation that an operation queue started.
        let insideAnOperation: Bool

        var description: String {
            switch (onTheStoreQueue, insideAnOperation) {
            case (true, true): title
            case (false, _): "\(title) (off the store's queue)"
            case (true, false): "\(title) (on the store's queue, but not as a job of an operation queue)"
            }
        }
    }

    let queue = DispatchQueue(label: "note store")
    private let key = DispatchSpecificKey<Bool>()
    private let held = Protected(false)
    /// Every save, in the order they ran.
    let saves = Recorder<Save>()
    /// The title of every call of `save(_:)` as it begins, before any gate holds it.
    let arrivals = Recorder<String>()
    /// The gate that saves from a given number on wait at, set by `pause(atSave:)`.
    private let pause = Protected<(from: Int, gate: Gate)?>(nil)

    init() {
        queue.setSpecific(key: key, value: true)
    }

    deinit {
        release()  // a dispatch queue released while suspended stops the program
    }

    func save(_ note: Note) {
        arrivals.record(note.title)
        if let (from, gate) = pause.value, arrivals.count >= from {
            gate.wait(timeout: Bound.standard * 3)
        }
        saves.record(
            Save(
                title: note.title,
                onTheStoreQueue: DispatchQueue.getSpecific(key: key) ?? false,
                insideAnOperation: OperationQueue.current != nil))
    }

    /// Makes the save numbered `number` (counting from 1) and every later one wait, on the store's
    /// thread, until the returned gate opens; the spec must open it.
    func pause(atSave number: Int) -> Gate {
        let gate = Gate("the store's save number \(number)")
        pause.withValue { $0 = (number, gate) }
        return gate
    }

    /// The titles saved so far, in order.
    var saved: [String] { saves.all.map(\.title) }

    /// The saves that ran anywhere but as a job on the store's queue.
    var misplaced: [Save] { saves.all.filter { !$0.onTheStoreQueue || !$0.insideAnOperation } }

    /// Makes the store busy: nothing handed to its queue runs until `release()`.
    func hold() {
        held.withValue { held in
            if !held { queue.suspend() }
            held = true
        }
    }

    /// Lets the store run what was handed to it; safe to call when it is not held.
    func release() {
        held.withValue { held in
            if held { queue.resume() }
            held = false
        }
    }
}

/// What the app's screen received from an engine, in order.
final class Screen: Sendable {
    /// Each delivery: a saved note's title, or "done" for a batch; with where it ran.
    let updates = Recorder<String>()

    /// The `onSaved` to give an engine.
    var onSaved: @Sendable (Note) -> Void {
        { [updates] note in updates.record(MainQueue.isCurrent ? note.title : "\(note.title) (off the main queue)") }
    }

    /// A `done` to give a batch, recorded as `name`.
    func done(_ name: String = "done") -> @Sendable () -> Void {
        { [updates] in updates.record(MainQueue.isCurrent ? name : "\(name) (off the main queue)") }
    }
}

/// Runs `body` as an operation on the main queue, and waits (bounded) until it has run.
///
/// - Returns: Whether it ran within the bound.
@discardableResult
func onTheMainQueue(
    _ what: String, timeout: Duration = Bound.standard, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Void
) async -> Bool {
    let ran = Protected(false)
    OperationQueue.main.addOperation {
        body()
        ran.withValue { $0 = true }
    }
    return await waitUntil("\(what) to run on the main queue", timeout: timeout, sourceLocation: sourceLocation) {
        ran.value
    }
}

/// An operation queue for an engine that lets a spec act the moment work has been added to it.
///
/// A hook set with `afterNextAdding` runs once, on the caller's thread, right after the queue
/// took the operations and before the call that added them returns: in the engine, before the
/// lines that follow its `addOperations`. The spec opens a window there instead of waiting for a
/// race to open it.
final class EngineQueue: OperationQueue, @unchecked Sendable {  // adds only a locked hook
    private let hook = Protected<(@Sendable ([Operation]) -> Void)?>(nil)

    /// Runs `body` with the operations of the next call that adds any, right after adding them.
    func afterNextAdding(_ body: @escaping @Sendable ([Operation]) -> Void) {
        hook.withValue { $0 = body }
    }

    override func addOperation(_ op: Operation) {
        super.addOperation(op)
        fire([op])
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        super.addOperations(ops, waitUntilFinished: wait)
        fire(ops)
    }

    private func fire(_ ops: [Operation]) {
        let body = hook.withValue { hook in
            defer { hook = nil }
            return hook
        }
        body?(ops)
    }
}
