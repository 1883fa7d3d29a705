import Chapter11
import Foundation
import KataTestSupport
import Testing

/// Stands for whatever the caller's closures keep (a screen, a view model): a spec watches it to
/// see whether the engine still holds the caller's `onSaved` and `done`.
final class CallerState: Sendable {}

/// How an engine's work ends before the spec looks at what is left of it.
enum EngineExit: String, CaseIterable, Sendable, CustomStringConvertible {
    case delivered = "a batch saved and delivered"
    case stopped = "a batch saved and delivered, then stop()"
    case pausedThenResumed = "updates held while paused, then resumeUpdates()"
    case pausedThenStopped = "updates held while paused, then stop()"
    case pausedThenLetGo = "updates held while paused, then the owner let go"
    case stoppedBeforeOpen = "a batch asked for before open(_:), then stop()"
    case letGoBeforeOpen = "a batch asked for before open(_:), then the owner let go"

    var description: String { rawValue }

    /// Whether the store opens before the batch is asked for.
    var opens: Bool { self != .stoppedBeforeOpen && self != .letGoBeforeOpen }

    /// Whether the exit holds updates first.
    var pauses: Bool { [.pausedThenResumed, .pausedThenStopped, .pausedThenLetGo].contains(self) }
}

@Suite("Nothing outlives an engine its owner let go of", .watched, .enginesTried)
struct EngineMemorySpecs {
    /// Runs `exit` with an engine that only this function holds, and lets go of it.
    ///
    /// - Returns: Weak references to the engine and to what the caller's closures keep, once the
    ///   main queue ran everything the exit sent there; nil after recording an issue.
    static func run(
        _ exit: EngineExit, stillOwned: @Sendable (SyncEngine) async -> Void = { _ in }
    ) async -> (
        engine: WeakReference<SyncEngine>, screen: WeakReference<CallerState>, batch: WeakReference<CallerState>,
        queue: WeakReference<OperationQueue>
    )? {
        let store = Desk()
        let updates = Recorder<String>()
        let screen = CallerState()
        let batch = CallerState()
        let queue = queueOfItsOwn()
        let engine = SyncEngine(queue: queue) { [screen] note in
            withExtendedLifetime(screen) { updates.record(note.title) }
        }
        let done: @Sendable () -> Void = { [batch] in withExtendedLifetime(batch) { updates.record("done") } }
        let opens = exit.opens
        if opens { engine.open(store) }
        let asked = Protected<[UploadJob]>([])
        let saved = Protected(false)
        await onTheMainQueue("the operation that asks for a batch") {
            let jobs = engine.upload(notes("a", "b"), then: done)
            asked.withValue { $0 = jobs }
            if exit == .stoppedBeforeOpen { engine.stop() }
            guard opens else { return }
            // The notes are saved meanwhile, so their updates queue up behind this operation.
            saved.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            if exit.pauses { engine.pauseUpdates() }
        }
        if opens, !saved.value {
            Issue.record("The notes a and b were never saved; the store saw \(store.saves.timeline).")
            return nil
        }
        if exit == .stoppedBeforeOpen {
            let jobs = asked.value
            guard
                await waitUntil(
                    "the jobs of a and b, kept aside until open(_:), to end once stop() returned", timeout: patience,
                    hint: """
                        \(jobs.filter { !$0.isFinished }.map(\.note.title)) never finished. A job that no \
                        queue holds is the engine's to cancel and to end, or the batch's end that \
                        depends on it waits for good, with the caller's done.
                        \(lesson.see("Running on a queue you own"))
                        """, givingUpWhen: { stuck(jobs, in: queue) }, { jobs.allSatisfy(\.isFinished) })
            else { return nil }
        }
        // The updates for a and b and the batch's done run now: delivered, held or dropped.
        await onTheMainQueue("an operation queued after the updates for a and b") {}
        await onTheMainQueue("an operation queued after what that one let run") {}
        if exit.pauses, updates.count > 0 {
            Issue.record(
                """
                While updates were paused, the screen received \(updates.timeline): nothing was \
                held, so this spec cannot see what a paused engine keeps.
                \(lesson.see("The main queue is everybody's"))
                """)
            return nil
        }
        switch exit {
        case .stopped, .pausedThenStopped: await onTheMainQueue("stop()") { engine.stop() }
        case .pausedThenResumed: await onTheMainQueue("resumeUpdates()") { engine.resumeUpdates() }
        case .delivered, .pausedThenLetGo, .stoppedBeforeOpen, .letGoBeforeOpen: break
        }
        await stillOwned(engine)
        await onTheMainQueue("an operation queued after the exit") {}
        return (WeakReference(engine), WeakReference(screen), WeakReference(batch), WeakReference(queue))
    }

    // The owner let go of the engine once its work ended. Look at what each update the engine
    // holds while paused captures, at what stop() does with the updates it holds, and at what
    // becomes of jobs still waiting for open(_:) when the engine goes away. See "The main queue
    // is everybody's" and "Running on a queue you own".
    // Covers: C80, C75
    // Paths: memory, collaborators
    @Test(
        "once its work ended and the owner let go, the engine and the caller's closures are freed",
        arguments: EngineExit.allCases)
    func nothingOutlivesTheEngine(exit: EngineExit) async {
        guard let (engine, screen, batch, queue) = await Self.run(exit) else { return }
        func alive() -> String {
            let names =
                (engine.value == nil ? [] : ["the engine"]) + (screen.value == nil ? [] : ["onSaved"])
                + (batch.value == nil ? [] : ["done"])
            return names.joined(separator: ", ")
        }
        await waitUntil(
            "the engine and the caller's onSaved and done to be freed after \(exit) (still alive: \(alive()))",
            hint: exit.opens
                ? """
                After \(exit), the owner let go of the engine, and something still holds it or \
                the closures it was given. An update the engine keeps aside while paused is a \
                closure stored in the engine: if it captures the engine itself (self inside a \
                closure made where self was already unwrapped is a strong reference), the engine \
                holds itself for good. Let a held update capture only what it needs (onSaved, the \
                note), and let stop() drop what it held.
                \(lesson.see("The main queue is everybody's"))
                """
                : """
                After \(exit), something still holds the engine or the closures it was given. Jobs \
                kept aside until open(_:) are in no queue: if nobody ends them, the batch's end \
                that depends on them waits on the main queue for good, and keeps done. They are \
                the engine's to end, at stop() and when the engine itself goes away.
                \(lesson.see("Running on a queue you own"))
                """,
            givingUpWhen: {
                // The engine is gone, so nothing can start what its suspended queue still holds.
                guard engine.value == nil, let left = queue.value, left.isSuspended, left.operationCount > 0 else {
                    return nil
                }
                return """
                    the engine is gone and its queue, still suspended, holds \(left.operationCount) \
                    operations that nothing will ever start, and with them what they keep
                    """
            }
        ) { engine.value == nil && screen.value == nil && batch.value == nil }
    }

    // The owner let go of the engine before open(_:), with a batch kept aside. Look at what
    // deinit does with those jobs: it ends them, but does it cancel each first? A job that
    // finished without being cancelled tells its caller it ran. See "Running on a queue you own".
    // Covers: C75
    // Paths: memory, reuse
    @Test("jobs kept aside until open(_:) end cancelled, unsaved, once the owner lets go of the engine")
    func letGoEndsWaitingJobsCancelled() async {
        let queue = queueOfItsOwn()
        // The engine lives for this one call: its owner lets go before any store opens.
        let jobs = SyncEngine(queue: queue).upload(notes("a", "b"))
        guard
            await waitUntil(
                "the jobs of a and b, kept aside until open(_:), to end once the owner let go of the engine",
                timeout: patience,
                hint: """
                    \(jobs.filter { !$0.isFinished }.map(\.note.title)) never finished. Jobs kept \
                    aside are in no queue: the engine ends them when it goes away, in deinit.
                    \(lesson.see("Running on a queue you own"))
                    """, givingUpWhen: { stuck(jobs, in: queue) }, { jobs.allSatisfy(\.isFinished) })
        else { return }
        let uncancelled = jobs.filter { !$0.isCancelled }.map(\.note.title)
        #expect(
            uncancelled.isEmpty,
            """
            The owner let go of the engine before open(_:), and the jobs \(uncancelled) ended \
            without saving and are not cancelled, so to their caller they look saved. In deinit \
            as in stop(), cancel each job before starting it.
            \(lesson.see("Running on a queue you own"))
            """)
    }

    // The owner still holds the engine after stop(). Look at what stop() does with the updates
    // it held while paused: the caller's onSaved and done among them. See "The main queue is
    // everybody's".
    // Covers: C80
    // Paths: collaborators, memory
    @Test("stop() lets go of the updates it held while paused, the caller's done included")
    func stopReleasesHeldUpdates() async {
        let kept = Protected<SyncEngine?>(nil)
        defer { kept.withValue { $0 = nil } }
        guard
            let (_, _, batch, _) = await Self.run(
                .pausedThenStopped, stillOwned: { engine in kept.withValue { $0 = engine } })
        else { return }
        await waitUntil(
            "the batch's done, held while paused, to be freed once stop() returned",
            hint: """
                The engine is still owned and stopped, and it keeps the updates it held while \
                paused, the batch's done among them, with whatever the caller's closure keeps: \
                after stop() nothing will ever deliver them. stop() drops every update not yet \
                delivered, the held ones included: let go of them.
                \(lesson.see("The main queue is everybody's"))
                """
        ) { batch.value == nil }
    }
}
