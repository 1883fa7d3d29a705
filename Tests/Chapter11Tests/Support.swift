import Chapter11
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 11)

/// How long a scenario waits for what correct code does within milliseconds.
let patience = Bound.scaled(.milliseconds(500))

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

    init() {
        queue.setSpecific(key: key, value: true)
    }

    deinit {
        release()  // a dispatch queue released while suspended stops the program
    }

    func save(_ note: Note) {
        saves.record(
            Save(
                title: note.title,
                onTheStoreQueue: DispatchQueue.getSpecific(key: key) ?? false,
                insideAnOperation: OperationQueue.current != nil))
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
