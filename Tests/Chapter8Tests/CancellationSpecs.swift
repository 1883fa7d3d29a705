import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("Cancelling the operation cancels its Task, and it finishes promptly", .watched)
struct CancellingTheWork {
    // Look at cancel() and the lesson's "Forward cancel() to the Task": which object does the
    // async work listen to for cancellation?
    // Covers: C24, C61
    @Test(
        "cancel() while the fetch waits: the fetch sees the cancellation, the operation finishes, dependents run",
        .preflightCancelling)
    func cancelReachesTheAwait() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        loader.trace.record("cancel() called")
        operation.cancel()
        guard await cancellationReached("fetch a", loader) else { return }
        guard
            await waitUntil(
                "the cancelled operation to finish and its dependent to run",
                hint: loader.trace.lifecycle(missing: "it never finished, or the dependent never ran") + "\n"
                    + lesson.see("Forward cancel() to the Task"),
                { operation.isFinished && loader.trace.contains { $0.hasPrefix("sentinel ran") } })
        else { return }
        #expect(
            !operation.isExecuting && !loader.trace.contains("resize a began"),
            """
            After cancelling, isExecuting is \(operation.isExecuting) and the resize \
            \(loader.trace.contains("resize a began") ? "still began" : "never began"); expected false and \
            never. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Forward cancel() to the Task"))
            """)
        let result = operation.result
        #expect(
            isCancellation(result),
            """
            A cancelled operation's result was \(describe(result)); expected failure(CancellationError()).
            \(lesson.see("Publish the result, then announce"))
            """)
    }

    // Look at the start of start() and the lesson's "Forward cancel() to the Task": what should an
    // operation that is already cancelled do when a queue starts it?
    // Covers: C21, C50, C61
    @Test(
        "cancelled before it starts, it finishes at once, never calls the loader, and releases its dependent",
        .preflightCancelling)
    func cancelledBeforeStart() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        operation.cancel()
        guard !operation.isFinished else {
            Issue.record(
                """
                cancel() finished an operation that no queue had started yet; a queue refuses (and traps on) \
                a finished operation. Leave an unstarted operation to start(), which sees isCancelled.
                \(lesson.see("Forward cancel() to the Task"))
                """)
            return
        }
        queue.enqueue([operation, dependent])
        guard
            await waitUntil(
                "the operation cancelled before start to finish and its dependent to run",
                hint: loader.trace.lifecycle(missing: "it never finished, or the dependent never ran") + "\n"
                    + lesson.see("Forward cancel() to the Task"),
                { operation.isFinished && loader.trace.contains { $0.hasPrefix("sentinel ran") } })
        else { return }
        #expect(
            !loader.trace.contains("fetch a began"),
            """
            The loader was asked to fetch for an operation that was cancelled before it started.
            \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Forward cancel() to the Task"))
            """)
        let result = operation.result
        #expect(
            isCancellation(result),
            """
            An operation cancelled before it started has result \(describe(result)); expected \
            failure(CancellationError()), so whoever reads it learns why there is no thumbnail.
            \(lesson.see("Publish the result, then announce"))
            """)

        // Started by hand, outside the queue that holds its dependent: only the announcement tells it.
        let byHand = TracedThumbnail("b", loader: loader)
        let waiter = sentinel(after: byHand, records: "sentinel of b ran")
        defer { loader.endSpec(keepingAlive: queue, byHand, waiter) }
        byHand.cancel()
        queue.addOperation(waiter)
        Thread.detachNewThread { byHand.start() }
        guard
            await waitUntil(
                "start() of b, cancelled before it started, to return with b finished",
                hint: loader.trace.lifecycle(missing: "start never returned, or b never finished") + "\n"
                    + lesson.see("Forward cancel() to the Task"),
                { loader.trace.contains("start returned (b)") && byHand.isFinished })
        else { return }
        await waitUntil(
            "the dependent of b, cancelled before start() was called by hand, to run",
            hint: """
                b reports isFinished true, but its dependent never ran: going straight to finished must \
                announce isFinished too. \(loader.trace.lifecycle(missing: "the dependent never ran"))
                \(lesson.see("Publish the result, then announce"))
                """,
            givingUpWhen: { waiter.isCancelled ? "the dependent was cancelled" : nil },
            { loader.trace.contains { $0.hasPrefix("sentinel of b ran") } })
    }
}

@Suite("Cancellation reaches the work at any moment", .watched)
struct CancellingAtAnyMoment {
    // Look at the async work inside the Task and the lesson's "Check between the steps": not every
    // await throws when its task is cancelled. What stops the resize once the fetch has returned?
    // Covers: C50, C61
    @Test(
        "cancelled while a step that ignores cancellation runs, the work stops before the next step",
        .preflightCancelling)
    func cancellationStopsBetweenSteps() async {
        let loader = ScriptedLoader()
        loader.ignoreCancellation(of: "fetch a")
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        loader.trace.record("cancel() called")
        operation.cancel()
        let finishedByCancel = operation.isFinished
        loader.resume("fetch a")
        let resizeBegan = { loader.trace.contains("resize a began") }
        guard
            await waitUntil(
                "the cancelled operation to finish without resizing, and its dependent to run",
                hint: loader.trace.lifecycle(missing: "it never finished, or the dependent never ran") + "\n"
                    + lesson.see("Check between the steps"),
                givingUpWhen: { resizeBegan() ? "the resize began although the operation was cancelled" : nil },
                { operation.isFinished && loader.trace.contains { $0.hasPrefix("sentinel ran") } })
        else { return }
        // cancel() finished the operation at once, so the work may still be on its way to the resize.
        var lateResize = false
        if finishedByCancel {
            lateResize = await comesTrue(within: Bound.scaled(.milliseconds(300)), resizeBegan)
        }
        #expect(
            !resizeBegan() && !lateResize,
            """
            The fetch returned a picture after the operation was cancelled, and the work went on to the \
            resize. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Check between the steps"))
            """)
        let result = operation.result
        #expect(
            isCancellation(result),
            """
            A cancelled operation's result was \(describe(result)); expected failure(CancellationError()).
            \(lesson.see("Publish the result, then announce"))
            """)
    }

    // Look at where start() checks isCancelled, where it stores the Task and where cancel() reads it,
    // and the lesson's "Forward cancel() to the Task": both run on different threads, with nothing
    // else between them. Can a cancel() land after the check but before the Task is stored? Can a
    // start() land after cancel() looked for the Task but before the flag was set?
    // Covers: C24, C50, C61
    @Test(
        "cancel() right after start() on another thread, while start() launches the Task, or with start() landing inside cancel(), still stops the work",
        .preflightCancelling)
    func cancelRightAfterStartByHand() async {
        let loader = ScriptedLoader()
        let operation = ThumbnailOperation(imageName: "a", width: thumbnailWidth, loader: loader)
        defer { loader.endSpec(keepingAlive: operation) }

        // Nothing here synchronises with start()'s thread except the operation's own code.
        Thread.detachNewThread { operation.start() }
        guard
            await waitUntil(
                "the fetch of a to begin after start() was called on another thread",
                hint: loader.trace.lifecycle(missing: "the fetch never began") + "\n"
                    + lesson.see("Start launches a Task and returns"),
                { loader.isWaiting("fetch a") })
        else { return }
        guard
            await waitUntil(
                "the operation to report isExecuting once its work began",
                hint: loader.trace.lifecycle(missing: "isExecuting stayed false") + "\n"
                    + lesson.see("Start launches a Task and returns"),
                givingUpWhen: { operation.isFinished ? "it already reports isFinished while its fetch waits" : nil },
                { operation.isExecuting })
        else { return }
        operation.cancel()
        loader.trace.record("cancel() returned")
        guard await cancellationReached("fetch a", loader) else { return }
        guard
            await waitUntil(
                "the cancelled operation to finish",
                hint: loader.trace.lifecycle(missing: "it never finished") + "\n"
                    + lesson.see("Forward cancel() to the Task"),
                { operation.isFinished })
        else { return }
        let result = operation.result
        #expect(
            isCancellation(result) && !operation.isExecuting,
            """
            The cancelled operation finished with result \(describe(result)) and isExecuting \
            \(operation.isExecuting); expected failure(CancellationError()) and false.
            \(lesson.see("Publish the result, then announce"))
            """)

        // Now a cancel() that lands while start() launches the work: when it reads the priority.
        let racer = TracedThumbnail("b", loader: loader)
        defer { loader.endSpec(keepingAlive: racer) }
        racer.launchWindow.race(
            { racer.start() },
            against: {
                racer.cancel()
                loader.trace.record("cancel() of b returned")
            })
        guard
            await waitUntil(
                "b, cancelled while its start() launched the Task, to finish",
                hint: """
                    \(loader.trace.lifecycle(missing: "b never finished"))
                    A cancel() that came after start() checked isCancelled but before it stored the Task \
                    found no Task to cancel, and the work went on. Check, create and store in one critical \
                    section, or check isCancelled again once the Task is stored.
                    \(lesson.see("Forward cancel() to the Task"))
                    """,
                { racer.isFinished && loader.trace.contains("cancel() of b returned") })
        else { return }
        let raced = racer.result
        #expect(
            isCancellation(raced) && !racer.isExecuting && !loader.trace.contains("resize b began"),
            """
            cancel() came while start() was launching the Task. The operation finished with result \
            \(describe(raced)) and isExecuting \(racer.isExecuting)\(loader.trace.contains("resize b began") ? ", and the resize began" : ""); \
            expected failure(CancellationError()), false, and no resize. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Forward cancel() to the Task"))
            """)

        // And a start() that lands while cancel() runs: at the first time cancel() asks whether the
        // operation is finished (Foundation's inherited cancel() asks before it sets isCancelled
        // on Linux), start() runs to its end on another thread.
        let late = TracedThumbnail("c", loader: loader)
        defer { loader.endSpec(keepingAlive: late) }
        late.raceWindow.race(
            {
                late.cancel()
                loader.trace.record("cancel() of c returned")
            },
            against: { late.start() })
        guard
            await waitUntil(
                "c, started while its cancel() ran, to finish",
                hint: """
                    \(loader.trace.lifecycle(missing: "c never finished"))
                    start() ran while cancel() was under way: after cancel() looked for the Task (there \
                    was none yet) but before isCancelled was set, so start() launched the work and nobody \
                    cancelled it. Set the flag first (super.cancel()), then look for the Task.
                    \(lesson.see("Forward cancel() to the Task"))
                    """,
                { late.isFinished && loader.trace.contains("cancel() of c returned") })
        else { return }
        let lateResult = late.result
        #expect(
            isCancellation(lateResult) && !loader.trace.contains("resize c began"),
            """
            start() came while cancel() was under way. The operation finished with result \
            \(describe(lateResult))\(loader.trace.contains("resize c began") ? " and the resize began" : ""); \
            expected failure(CancellationError()) and no resize. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Forward cancel() to the Task"))
            """)
    }
}

extension CancellingAtAnyMoment {
    // Look at start() between the moment it finds isCancelled false and the moment the Task it made
    // can be found by cancel(), and the lesson's "Forward cancel() to the Task": a cancel() on
    // another thread that lands in between finds no Task, and the work runs on for nobody.
    // Covers: C24, C50, C61
    // Paths: interference
    @Test(
        "cancel() and start() called at the same moment on two threads, round after round, never lose the cancel",
        .preflightCancelling)
    func cancelRacingStartIsNeverLost() async {
        let loader = ScriptedLoader()
        let rounds = 500
        let operations = (0..<rounds).map {
            ThumbnailOperation(imageName: "r\($0)", width: thumbnailWidth, loader: loader)
        }
        defer {
            loader.releaseAll()
            withExtendedLifetime(operations) {}
        }
        // Both calls of a round returned: a Task of the cancelled operation is cancelled by now, so
        // a fetch still waiting for the spec is one whose cancel was lost. The rounds stop at the
        // first such fetch seen among the last few rounds.
        let ended = Protected((rounds: 0, stopped: false))
        StartAgainstCancel.race(
            operations,
            lostOne: { round in
                operations[max(0, round - 16)...round].contains { loader.isWaiting("fetch \($0.imageName)") }
            },
            ended: { stopped in ended.withValue { $0 = ($0.rounds + 1, stopped) } })
        guard
            await waitUntil(
                "\(rounds) rounds of start() on one thread against cancel() on another to return",
                hint: loader.trace.lifecycle(missing: "a start() or a cancel() never returned") + "\n"
                    + lesson.see("Forward cancel() to the Task"),
                { ended.value.rounds == rounds || ended.value.stopped })
        else { return }
        let played = operations.prefix(ended.value.rounds)
        let lost = { played.filter { loader.isWaiting("fetch \($0.imageName)") } }
        guard
            await waitUntil(
                "every operation, each cancelled while another thread started it, to finish",
                hint: loader.trace.lifecycle(missing: "some never finished") + "\n"
                    + lesson.see("Forward cancel() to the Task"),
                givingUpWhen: {
                    let stranded = lost()
                    guard let first = stranded.first else { return nil }
                    return """
                        in \(stranded.count) of \(played.count) rounds the cancel() was lost: the operation reports \
                        isCancelled \(first.isCancelled) and isExecuting \(first.isExecuting), yet its fetch \
                        (\(first.imageName)) waits and its Task was never cancelled. A cancel() that came after \
                        start() checked isCancelled but before the Task was stored found nothing to cancel: \
                        check, create and store in one critical section, or check isCancelled again once \
                        the Task is stored
                        """
                },
                { played.allSatisfy(\.isFinished) })
        else { return }
        let wrong = played.filter { !isCancellation($0.result) || $0.isExecuting }
        let allCancelled = wrong.isEmpty
        #expect(
            allCancelled,
            """
            Every operation was cancelled while another thread started it; \(wrong.count) of them finished \
            otherwise (\(wrong.first.map { "\($0.imageName): \(describe($0.result))" } ?? "")); expected \
            failure(CancellationError()) and isExecuting false for each.
            \(lesson.see("Forward cancel() to the Task"))
            """)
    }
}

/// Calls start() on one thread and cancel() on another at the same moment, one operation per round.
enum StartAgainstCancel {
    /// Runs the rounds on threads of their own. After each round, `lostOne(round)` says whether a
    /// cancel was seen lost (the rounds then stop), and `ended(stopped)` counts the round.
    static func race(
        _ operations: [ThumbnailOperation], lostOne: @escaping @Sendable (Int) -> Bool,
        ended: @escaping @Sendable (_ stopped: Bool) -> Void
    ) {
        let (startGo, cancelGo) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let (startDone, cancelDone) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let stop = Protected(false)
        /// A thread that calls `act` on each operation in turn, once `go` lets it, and says so on `done`.
        func worker(
            _ go: DispatchSemaphore, _ done: DispatchSemaphore, _ act: @escaping @Sendable (ThumbnailOperation) -> Void
        ) {
            Thread.detachNewThread {
                for operation in operations {
                    go.wait()
                    if stop.value { return }
                    act(operation)
                    done.signal()
                }
            }
        }
        worker(startGo, startDone) { $0.start() }
        worker(cancelGo, cancelDone) { $0.cancel() }
        Thread.detachNewThread {
            for round in operations.indices {
                startGo.signal()
                cancelGo.signal()
                startDone.wait()
                cancelDone.wait()
                let lost = lostOne(round)
                ended(lost)
                if lost {
                    stop.withValue { $0 = true }
                    startGo.signal()
                    cancelGo.signal()
                    return
                }
            }
        }
    }
}

/// Waits briefly for the step `name` to see its task's cancellation, which a forwarded `cancel()` causes at once.
func cancellationReached(
    _ name: String,
    _ loader: ScriptedLoader,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    await waitUntil(
        "the waiting \(name) to see the task's cancellation",
        timeout: Bound.scaled(.milliseconds(500)),
        hint: loader.trace.lifecycle(missing: "the \(name) never saw it") + "\n"
            + "Operation.cancel() sets isCancelled; the Task does not know unless you cancel it too.\n"
            + lesson.see("Forward cancel() to the Task"),
        sourceLocation: sourceLocation,
        { loader.trace.contains("\(name) saw cancellation") })
}

/// Whether `result` is a failure with `CancellationError`.
func isCancellation(_ result: Result<Thumbnail, any Error>?) -> Bool {
    guard case .failure(let error)? = result else { return false }
    return error is CancellationError
}
