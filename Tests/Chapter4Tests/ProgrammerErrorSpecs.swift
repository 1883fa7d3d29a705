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

    /// Hands the runner an operation whose dependency has not finished, then finishes it.
    static func notReady() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let ran = Gate("the operation's work")
        let dependency = BlockOperation {}
        let operation = BlockOperation { ran.open() }
        operation.addDependency(dependency)
        runner.run(operation)  // traps if it calls start() now
        dependency.start()
        if !ran.wait(timeout: Chapter4Bound.retry) { exit(EXIT_FAILURE) }  // never retried
    }

    /// Hands the runner an operation that another thread has already started.
    static func alreadyExecuting() {
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
        Thread.detachNewThread { operation.start() }
        if !entered.wait() { exit(EXIT_FAILURE) }
        runner.perform(operation)
        runner.run(operation)
        if startedAgain.wait(timeout: quietPeriod) { exit(EXIT_FAILURE) }  // start() traps next
        release.open()
    }

    /// Puts an operation in a suspended queue through the runner, then asks the runner to start it.
    static func queued() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = OperationQueue()
        queue.isSuspended = true
        let startedByHand = Gate("start() called by hand")
        let ran = Gate("the operation's work")
        let operation = ProbeOperation(
            onStart: { _ in if OperationQueue.current !== queue { startedByHand.open() } },
            work: { ran.open() })
        if !runner.enqueue(operation, on: queue) { exit(EXIT_FAILURE) }
        runner.perform(operation)
        if startedByHand.wait(timeout: quietPeriod) { exit(EXIT_FAILURE) }  // start() traps next
        queue.isSuspended = false
        if !ran.wait() { exit(EXIT_FAILURE) }
    }

    /// Starts an operation through the runner, then asks the runner to put it in a queue.
    static func startedThenQueued() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = OperationQueue()
        let operation = ThreadedOperation {}
        runner.perform(operation)
        if runner.enqueue(operation, on: queue) { exit(EXIT_FAILURE) }  // addOperation traps
        runner.wait(for: operation)
    }
}

@Suite("The runner prevents the start() misuses that stop a program")
struct ProgrammerErrorSpecs {
    // Look at ManualRunner.run(_:) and perform(_:): what they do with an operation whose
    // dependency has not finished, and later, once it has. Lesson: "Retrying with a timer".
    // Covers: C27, C28, C31
    @Test("handed an operation that is not ready, the runner neither crashes nor gives up")
    func notReady() async {
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
        LastWords.explain(outcome)
    }

    // Look at the checks at the top of ManualRunner.perform(_:): an operation another thread
    // already started. Lesson: "Starting by hand".
    // Covers: C28
    @Test("handed an operation that is already executing, the runner does not start it again")
    func alreadyExecuting() async {
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: the runner called start() a \
            second time on an operation that was executing. \(lesson.see("Starting by hand"))
            """
        ) {
            Misuse.alreadyExecuting()
        }
        LastWords.explain(outcome)
    }

    // Look at ManualRunner.enqueue(_:on:) and perform(_:): what the runner knows about the
    // operations it gave to a queue. Lesson: "Who owns an operation".
    // Covers: C34
    @Test("the runner does not start by hand an operation that sits in a queue")
    func queuedIsLeftToTheQueue() async {
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: the runner called start() by \
            hand on an operation waiting in a queue. \(lesson.see("Who owns an operation"))
            """
        ) {
            Misuse.queued()
        }
        LastWords.explain(outcome)
    }

    // Look at ManualRunner.enqueue(_:on:): an operation the runner has already started.
    // Lesson: "Who owns an operation".
    // Covers: C34
    @Test("the runner does not put in a queue an operation it started by hand")
    func startedIsNotQueued() async {
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: the runner added an operation it \
            had started by hand to a queue. \(lesson.see("Who owns an operation"))
            """
        ) {
            Misuse.startedThenQueued()
        }
        LastWords.explain(outcome)
    }
}
