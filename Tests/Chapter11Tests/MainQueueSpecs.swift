import Chapter11
import Foundation
import KataTestSupport
import Testing

/// An operation for the main queue that records whether it ran, for messages about what else the engine touched.
private final class Bystander: Sendable {
    let operation: BlockOperation
    private let ran = Protected(false)

    init() {
        let ran = ran
        operation = BlockOperation { ran.withValue { $0 = true } }
    }

    var hasRun: Bool { ran.value }
}

@Suite("The main queue belongs to the whole app")
struct MainQueueSpecs {
    // stop() is called on the main queue while the engine's updates wait there. Look at how
    // SyncEngine.stop() drops them, and at what else that touches. See "The main queue is
    // everybody's".
    // Covers: C80
    @Test("stop() drops the engine's waiting updates and leaves other main-queue work alone")
    func stopDropsOnlyTheEnginesUpdates() async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(onSaved: screen.onSaved)
        engine.open(store)
        let bystander = Bystander()
        let saved = Protected(false)
        // One main-queue operation: the notes are saved meanwhile, so the engine's updates queue
        // up behind it; then other work is queued, and the engine stopped.
        await onTheMainQueue("the operation that stops the engine") {
            let jobs = engine.upload(notes("a", "b"), then: screen.done())
            saved.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            OperationQueue.main.addOperation(bystander.operation)
            engine.stop()
        }
        guard saved.value else {
            Issue.record("The notes a and b were never saved; the store saw \(store.saves.timeline).")
            return
        }
        await waitUntil(
            "an operation queued on the main queue by other code to run after stop()",
            hint: """
                It was cancelled: stop() cancelled every operation of the main queue, the app's and \
                the screen's included, not only the engine's. \(lesson.see("The main queue is everybody's"))
                """,
            givingUpWhen: { bystander.operation.isCancelled ? "it was cancelled" : nil }
        ) { bystander.hasRun }
        await onTheMainQueue("an operation queued after them") {}
        #expect(
            screen.updates.count == 0,
            """
            After stop() returned, the screen still received \(screen.updates.timeline). Updates \
            that were already waiting on the main queue must be dropped; on Linux \
            OperationQueue.main ignores cancelAllOperations().
            \(lesson.see("The main queue is everybody's"))
            """)
    }

    // pauseUpdates() and resumeUpdates() are called on the main queue. Look at what they
    // suspend. See "The main queue is everybody's".
    // Covers: C80
    @Test("pausing holds the engine's updates, even those already sent, while other main-queue work goes on")
    func pauseHoldsOnlyTheEnginesUpdates() async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(onSaved: screen.onSaved)
        engine.open(store)
        let saved = Protected(false)
        await onTheMainQueue("the operation that pauses updates") {
            let jobs = engine.upload(notes("a", "b"), then: screen.done())
            saved.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            engine.pauseUpdates()
        }
        // Whatever happens, the main queue must run again for the specs that follow.
        defer { engine.resumeUpdates() }
        guard saved.value else {
            Issue.record("The notes a and b were never saved; the store saw \(store.saves.timeline).")
            return
        }
        let bystander = Bystander()
        OperationQueue.main.addOperation(bystander.operation)
        guard
            await waitUntil(
                "another main-queue operation to run while the engine's updates are paused",
                hint: """
                    pauseUpdates() stopped the whole main queue, and with it the app's screen. \
                    \(lesson.see("The main queue is everybody's"))
                    """, { bystander.hasRun })
        else { return }
        await onTheMainQueue("an operation queued after them") {}
        #expect(
            screen.updates.count == 0,
            """
            While updates were paused, the screen received \(screen.updates.timeline). On Linux \
            OperationQueue.main ignores isSuspended, and an update sent before the pause waits on \
            the main queue: decide when it runs.
            \(lesson.see("The main queue is everybody's"))
            """)
        await onTheMainQueue("resumeUpdates()") { engine.resumeUpdates() }
        await waitUntil(
            "a, b and done to reach the screen after resumeUpdates()",
            hint: "The screen received \(screen.updates.timeline). \(lesson.see("The main queue is everybody's"))"
        ) { screen.updates.count >= 3 }
        let updates = screen.updates.all
        #expect(
            updates.filter { $0 != "done" } == ["a", "b"] && updates.contains("done"),
            """
            After resumeUpdates(), the screen received \(screen.updates.timeline); expected a and \
            b, in that order, and done, all on the main queue.
            \(lesson.see("The main queue is everybody's"))
            """)
    }
}
