import Chapter4
import Foundation
import KataTestSupport
import Testing

/// Scenarios run in a child process: Foundation stops the program when `start()` is misused.
///
/// Each one exits with a failure if the runner does what the lesson forbids (the trap would
/// follow anyway) and returns normally if the runner prevents it.
enum Misuse {
    /// How long a child waits for a forbidden start by hand that the runner should never make.
    static let quietPeriod = Chapter4Bound.quietPeriod

    /// Hands the runner an operation whose dependency has not finished, then finishes it while
    /// the main queue is busy, as it is in a program whose main thread blocks in `wait(for:)`.
    static func notReady() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let ran = Gate("the operation's work")
        // Busy until the work has run, or for longer than this child waits for it.
        DispatchQueue.main.async { _ = ran.wait(timeout: Chapter4Bound.retry * 2) }
        let dependency = BlockOperation {}
        let operation = BlockOperation { ran.open() }
        operation.addDependency(dependency)
        LastWords.note(
            "notReadyMainBusy",
            """
            The program stopped while run(_:) was handed an operation whose dependency had not \
            finished: it called start() on it.
            """)
        runner.run(operation)  // traps if it calls start() now
        dependency.start()
        if !ran.wait(timeout: Chapter4Bound.retry) {
            LastWords.fail(
                "notReadyMainBusy",
                """
                The operation's dependency finished, and nothing started the operation within \
                \(Chapter4Bound.retry.seconds) s while the main queue was busy: the retries stopped, or \
                they wait for a run loop or for the main queue, which run only while the main \
                thread is free (a command-line tool never runs them, and a main thread blocked in \
                wait(for:) runs them no more). Retry on a queue of the runner's own.
                """)
        }
    }

    /// Hands the runner an operation that another thread has already started, then hands it
    /// over again once it was cancelled while it executes.
    static func executingElsewhere() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let entered = Gate("the work has begun")
        let release = Gate("the work may end")
        let startedAgain = Gate("a second start()")
        let operation = ProbeOperation(
            onStart: { count in if count > 1 { startedAgain.open() } },
            work: {
                entered.open()
                release.wait()
            })
        defer { release.open() }
        Thread.detachNewThread { operation.start() }
        if !entered.wait() {
            LastWords.fail(
                "executingElsewhere",
                "The operation's work never began on the thread that started it (waited \(Bound.standard.seconds) s).")
        }
        runner.perform(operation)
        runner.run(operation)
        if startedAgain.wait(timeout: quietPeriod) {  // a real operation's start() traps here
            LastWords.fail(
                "executingElsewhere",
                """
                Another thread had started the operation and its work was still running, and the \
                runner called its start() a second time.
                """)
        }
        operation.cancel()
        runner.perform(operation)
        runner.run(operation)
        if startedAgain.wait(timeout: quietPeriod) {  // a real operation's start() traps here
            LastWords.fail(
                "executingElsewhere",
                """
                The operation was cancelled while another thread executed it, and the runner then \
                called its start() a second time: cancelled does not make an executing operation \
                yours to start. Leave alone an operation that is executing, cancelled or not.
                """)
        }
    }

    /// Puts two operations in a suspended queue through the runner, hands one over to be queued
    /// again and to be started now and when ready, cancels the other, then asks the runner to
    /// start both.
    static func waitingInQueue() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = OperationQueue()
        queue.isSuspended = true
        let startedByHand = Gate("start() called by hand on the operation")
        let cancelledStartedByHand = Gate("start() called by hand on the cancelled operation")
        let ran = Gate("the operation's work")
        let operation = ProbeOperation(
            onStart: { _ in if OperationQueue.current !== queue { startedByHand.open() } },
            work: { ran.open() })
        let cancelled = ProbeOperation(
            onStart: { _ in if OperationQueue.current !== queue { cancelledStartedByHand.open() } })
        for (name, each) in [("the operation", operation), ("the second operation", cancelled)]
        where !runner.enqueue(each, on: queue) {
            LastWords.fail(
                "waitingInQueue",
                "enqueue(_:on:) returned false for \(name), which nobody had started or handed over.")
        }
        LastWords.note(
            "waitingInQueue",
            """
            The program stopped while enqueue(_:on:) was handed again an operation it had put in \
            a suspended queue: it added an operation that a queue owns to a queue a second time.
            """)
        if runner.enqueue(operation, on: queue) {  // addOperation traps before this
            LastWords.fail(
                "waitingInQueue",
                """
                enqueue(_:on:) returned true for an operation it had already put in a queue, where \
                it still waited: remember what you queued until it finishes, and refuse it.
                """)
        }
        LastWords.note(
            "waitingInQueue",
            """
            The program stopped while perform(_:) was handed an operation waiting in a suspended \
            queue: it called start() by hand on an operation that a queue owns.
            """)
        runner.perform(operation)
        if startedByHand.wait(timeout: quietPeriod) {  // a real operation's start() traps here
            LastWords.fail(
                "waitingInQueue",
                "perform(_:) called start() by hand on an operation it had put in a queue that was suspended.")
        }
        LastWords.note(
            "waitingInQueue",
            """
            The program stopped while run(_:) was handed an operation waiting in a suspended \
            queue: it, or one of its retries, called start() by hand on an operation that a queue \
            owns. run(_:) and its retries must look at what you queued as perform(_:) does.
            """)
        runner.run(operation)
        if startedByHand.wait(timeout: quietPeriod) {  // a real operation's start() traps here
            LastWords.fail(
                "waitingInQueue",
                "run(_:) called start() by hand on an operation it had put in a queue that was suspended.")
        }
        cancelled.cancel()
        LastWords.note(
            "waitingInQueue",
            """
            The program stopped while perform(_:) was handed an operation that was cancelled while \
            it waited in a suspended queue: it called start() by hand on an operation that a \
            queue owns. Cancelled or not, the queue starts it, and finishes it then.
            """)
        runner.perform(cancelled)
        if cancelledStartedByHand.wait(timeout: quietPeriod) {  // a start() by hand traps here or later
            LastWords.fail(
                "waitingInQueue",
                """
                An operation the runner had put in a suspended queue was cancelled there, and \
                perform(_:) then called its start() by hand: cancelled does not take it from the \
                queue, which starts it (and so finishes it) when it resumes. Leave alone what \
                you queued, cancelled or not.
                """)
        }
        queue.isSuspended = false
        if !ran.wait() {
            LastWords.fail(
                "waitingInQueue",
                "Once the queue resumed, the operation's work never ran (waited \(Bound.standard.seconds) s).")
        }
    }

    /// Starts two operations through the runner, then asks the runner to put each in a queue:
    /// a concurrent one while its work still runs, and a non-concurrent one that has finished,
    /// which it then hands to `run(_:)`.
    static func startedThenQueued() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = OperationQueue()
        let release = Gate("the running operation's work may end")
        let running = ThreadedOperation { release.wait() }
        defer { release.open() }
        runner.perform(running)
        LastWords.note(
            "startedThenQueued",
            """
            The program stopped while enqueue(_:on:) was handed an operation that perform(_:) had \
            started and whose work was still running: it added an executing operation to a queue.
            """)
        if runner.enqueue(running, on: queue) {  // addOperation traps before this
            LastWords.fail(
                "startedThenQueued",
                """
                enqueue(_:on:) returned true for an operation that perform(_:) had started and that \
                was still executing.
                """)
        }
        release.open()
        runner.wait(for: running)
        let ran = BlockOperation {}
        runner.perform(ran)  // non-concurrent: finished when perform(_:) returns
        LastWords.note(
            "startedThenQueued",
            """
            The program stopped while enqueue(_:on:) was handed an operation that perform(_:) had \
            already run to the end: it added a finished operation to a queue. Finished is \
            started too: a queue takes only an operation that nobody has started.
            """)
        if runner.enqueue(ran, on: queue) {  // addOperation traps before this
            LastWords.fail(
                "startedThenQueued",
                "enqueue(_:on:) returned true for an operation that perform(_:) had already run to the end.")
        }
        runner.run(ran)  // finished: nothing to start, nothing to retry
        if !settles(within: Chapter4Bound.retry, { runner.waitingCount == 0 }) {
            LastWords.fail(
                "startedThenQueued",
                """
                enqueue(_:on:) refused an operation that had finished, and run(_:) then got it: \
                waitingCount stayed \(runner.waitingCount), so a retry looks at it for ever. A \
                look that finds an operation claimed waits for the next one; a claim that \
                enqueue(_:on:) took and did not give back when it refused makes every later look \
                find it claimed. Give the claim back on every way out of enqueue(_:on:), a \
                refusal included. \(lesson.see("Two threads, one operation"))
                """)
        }
    }
}

@Suite("The runner prevents the start() misuses that stop a program", .watched)
struct ProgrammerErrorSpecs {
    // Look at ManualRunner.run(_:) and perform(_:): what they do with an operation whose
    // dependency has not finished, and later, once it has. Lesson: "Retrying with a timer".
    // Covers: C27, C28, C31
    // Paths: collaborators
    @Test("handed an operation that is not ready, the runner neither crashes nor gives up")
    func notReady() async {
        LastWords.forget("notReadyMainBusy")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: the runner either called start() \
            on an operation whose dependency had not finished, or never ran it once it was \
            ready. \(lesson.see("Retrying with a timer"))
            """
        ) {
            Misuse.notReady()
        }
        LastWords.explain("notReadyMainBusy", outcome)
    }

    // Look at the checks at the top of ManualRunner.perform(_:), and their order: an operation
    // another thread already started, and later cancelled. Lessons: "Starting by hand",
    // "Cancelled operations".
    // Covers: C28
    // Paths: reuse
    @Test("handed an operation that is already executing, cancelled or not, the runner does not start it again")
    func alreadyExecuting() async {
        LastWords.forget("executingElsewhere")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: the runner called start() a \
            second time on an operation that was executing, before or after it was cancelled. \
            \(lesson.see("Starting by hand"))
            """
        ) {
            Misuse.executingElsewhere()
        }
        LastWords.explain("executingElsewhere", outcome)
    }

    // Look at ManualRunner.enqueue(_:on:), perform(_:) and run(_:): what the runner knows about
    // the operations it gave to a queue, when one is handed over again by any of the three, and
    // whether a cancelled one skips that check. Lesson: "Who owns an operation".
    // Covers: C34
    // Paths: reuse
    @Test("the runner neither queues again nor starts by hand an operation that sits in a queue, even a cancelled one")
    func queuedIsLeftToTheQueue() async {
        LastWords.forget("waitingInQueue")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: the runner added an operation \
            waiting in a queue to a queue again, or perform(_:) or run(_:) called start() by hand \
            on it, cancelled or not. \
            \(lesson.see("Who owns an operation"))
            """
        ) {
            Misuse.waitingInQueue()
        }
        LastWords.explain("waitingInQueue", outcome)
    }

    // Look at ManualRunner.enqueue(_:on:): an operation the runner has already started, still
    // running or already finished, and what its refusal leaves for a later run(_:). Lessons:
    // "Who owns an operation", "Two threads, one operation".
    // Covers: C31, C34
    // Paths: reuse
    @Test(
        "the runner does not put in a queue an operation it started by hand, running or finished, and a refusal leaves nothing behind"
    )
    func startedIsNotQueued() async {
        LastWords.forget("startedThenQueued")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: the runner added an operation it \
            had started by hand, still running or finished, to a queue, or kept retrying a \
            finished one that enqueue(_:on:) had refused. \(lesson.see("Who owns an operation"))
            """
        ) {
            Misuse.startedThenQueued()
        }
        LastWords.explain("startedThenQueued", outcome)
    }
}
