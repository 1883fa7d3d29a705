import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("An operation that is not ready yet is retried on a timer until it can start")
struct RetryingTests {
    /// A short retry interval keeps these specs fast.
    static let interval = Chapter4Bound.retryInterval

    // run(_:) must not start a waiting operation; it looks again later, on a timer that fires
    // without a run loop (a DispatchSourceTimer or asyncAfter; a Timer needs a running run loop).
    // Covers: C27, C31
    @Test("a waiting operation starts once, after its dependency finishes, and retrying stops")
    func startsWhenReady() async throws {
        let runner = ManualRunner(retryInterval: Self.interval)
        let dependency = BlockOperation {}
        let operation = ProbeOperation()
        operation.addDependency(dependency)
        runner.run(operation)
        try #require(
            operation.startCount == 0,
            """
            run(_:) started an operation whose dependency had not finished; start() on an \
            operation that is not ready is a programmer error. \(lesson.see("Retrying with a timer"))
            """)
        #expect(
            runner.waitingCount == 1,
            """
            After run(_:) with an operation that is not ready, waitingCount was \
            \(runner.waitingCount); the runner should be retrying exactly that one operation. \
            \(lesson.see("Retrying with a timer"))
            """)
        dependency.start()
        let started = await waitUntil(
            "the runner to start the operation after its dependency finished",
            timeout: Chapter4Bound.retry,
            hint: """
                Nothing retried it. A Timer scheduled on a thread whose run loop never runs \
                never fires. \(lesson.see("Retrying with a timer"))
                """
        ) { operation.isFinished }
        guard started else { return }
        await waitUntil(
            "the runner to stop retrying once the operation had started",
            hint:
                "waitingCount stayed \(runner.waitingCount). \(lesson.see("Retrying with a timer"))"
        ) { runner.waitingCount == 0 }
        #expect(
            operation.startCount == 1 && operation.runCount == 1,
            """
            The operation was started \(operation.startCount) times and ran \(operation.runCount) \
            times; it should be started exactly once. \(lesson.see("Retrying with a timer"))
            """)
    }

    // Cancelling makes a waiting operation ready at once. The next retry must start it (so it
    // finishes without running) and then stop; a retry that skips cancelled operations never ends.
    // Covers: C29, C31
    @Test("a waiting operation that is cancelled is finished and no longer retried")
    func cancelledWhileWaiting() async {
        let runner = ManualRunner(retryInterval: Self.interval)
        let neverStarted = BlockOperation {}
        let operation = ProbeOperation()
        operation.addDependency(neverStarted)
        runner.run(operation)
        operation.cancel()
        let finished = await waitUntil(
            "the runner to move the cancelled operation to finished",
            timeout: Chapter4Bound.retry,
            hint: """
                The operation was cancelled while the runner retried it. Cancelled means ready: \
                the next retry should start it, which finishes it. \
                \(lesson.see("Retrying with a timer"))
                """
        ) { operation.isFinished }
        guard finished else { return }
        await waitUntil(
            "the runner to stop retrying the cancelled operation",
            hint: """
                waitingCount stayed \(runner.waitingCount): the runner keeps retrying an operation \
                that was cancelled. \(lesson.see("Retrying with a timer"))
                """
        ) { runner.waitingCount == 0 }
        #expect(
            operation.runCount == 0,
            "The cancelled operation's work ran \(operation.runCount) times; it must not run. \(lesson.see("Cancelled operations"))"
        )
    }

    /// When the operation is handed to the runner a second time.
    enum SecondHandOver: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case whileWaiting = "handed over twice while it waits for its dependency"
        case afterItRan = "handed over again after it ran"

        var testDescription: String { rawValue }
    }

    // Before starting, check that the operation has not started or finished already: a second
    // start() on a started operation is a programmer error, and work must never run twice.
    // Covers: C28, C31
    @Test("an operation handed over twice is started once", arguments: SecondHandOver.allCases)
    func startedOnce(when: SecondHandOver) async {
        let runner = ManualRunner(retryInterval: Self.interval)
        let operation = ProbeOperation()
        switch when {
        case .whileWaiting:
            let dependency = BlockOperation {}
            operation.addDependency(dependency)
            runner.run(operation)
            runner.run(operation)
            dependency.start()
        case .afterItRan:
            runner.run(operation)
            await waitUntil("the runner to run the ready operation") { operation.isFinished }
            await waitUntil("the runner to be done with the operation") { runner.waitingCount == 0 }
            runner.run(operation)
            runner.perform(operation)
        }
        let settled = await waitUntil(
            "the runner to run the operation and stop retrying it",
            timeout: Chapter4Bound.retry,
            hint:
                "waitingCount stayed \(runner.waitingCount). \(lesson.see("Retrying with a timer"))"
        ) { operation.isFinished && runner.waitingCount == 0 }
        guard settled else { return }
        #expect(
            operation.startCount == 1,
            """
            The operation was \(when.rawValue) and its start() was called \
            \(operation.startCount) times; it should be called exactly once. Leave alone an \
            operation that is executing or finished. \(lesson.see("Starting by hand"))
            """)
    }

    /// The two threads that hand the same operation to the runner at the same moment.
    enum Rivals: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case twoCallers = "two threads call perform(_:)"
        case timerAndCaller = "the retry timer and a thread calling perform(_:)"

        var testDescription: String { rawValue }
    }

    // Checking isReady, isExecuting and isFinished and then calling start() is two steps: another
    // thread can pass the same checks in between, and a second start() stops the program. Make
    // the check and the start one step (claim the operation under the lock first), and hold the
    // lock only for the bookkeeping, never across start(), which runs the whole work.
    // Covers: C27, C28
    @Test(
        "an operation handed over by two threads at once is started once", arguments: Rivals.allCases)
    func startedOnceByRivals(rivals: Rivals) async {
        let runner = ManualRunner(retryInterval: Self.interval)
        let firstStartMayGoOn = Gate("the first start() may go on")
        // The first start() is held before the operation begins executing: for the other thread,
        // the operation looks ready and not started, exactly as it did to the first.
        let operation = ProbeOperation(onStart: { count in
            if count == 1 { firstStartMayGoOn.wait() }
        })
        defer { firstStartMayGoOn.open() }
        switch rivals {
        case .twoCallers:
            Thread.detachNewThread { runner.perform(operation) }
        case .timerAndCaller:
            let dependency = BlockOperation {}
            operation.addDependency(dependency)
            runner.run(operation)
            dependency.start()
        }
        let firstArrived = await waitUntil(
            "the first thread to call start() on the operation",
            timeout: Chapter4Bound.retry,
            hint: """
                Nothing started it. A Timer fires only while the run loop of the thread that \
                scheduled it runs. \(lesson.see("Retrying with a timer"))
                """
        ) { operation.startCount >= 1 }
        guard firstArrived else { return }
        let secondReturned = Gate("the second perform(_:) returned")
        Thread.detachNewThread {
            runner.perform(operation)
            secondReturned.open()
        }
        await waitUntil(
            "perform(_:) on the second thread to return, leaving the operation to the first",
            hint: """
                The second perform(_:) waited while another thread was inside the operation's \
                start(). Hold the runner's lock for the bookkeeping only, never across start(). \
                \(lesson.see("Two threads, one operation"))
                """,
            givingUpWhen: {
                operation.startCount > 1
                    ? """
                    the second thread called start() too, while the first thread's start() was \
                    still under way: both passed the checks before either started it
                    """ : nil
            }
        ) { secondReturned.isOpen }
        firstStartMayGoOn.open()
        await waitUntil("the operation to finish once the first start() went on") {
            operation.isFinished
        }
        #expect(
            operation.startCount == 1,
            """
            While \(rivals.rawValue) at once, the operation's start() was called \
            \(operation.startCount) times; a second start() stops the program. Claim the \
            operation before the checks, so that only one thread can pass them. \
            \(lesson.see("Two threads, one operation"))
            """)
    }
}
