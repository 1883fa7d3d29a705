import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("An operation that is not ready yet is retried on a timer until it can start")
struct RetryingSpecs {
    /// A short retry interval keeps these specs fast.
    static let interval = Chapter4Bound.retryInterval

    // Look at ManualRunner.run(_:): the timer that should look at a waiting operation again,
    // and waitingCount. Lesson: "Retrying with a timer".
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

    // Look at what a retry in ManualRunner.run(_:) does with an operation cancelled while it
    // waits. Lessons: "Cancelled operations", "Retrying with a timer".
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

    // Look at ManualRunner.run(_:) and perform(_:) when the same operation comes twice: the
    // retries they keep and the checks before start(). Lesson: "Retrying with a timer".
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
            runner.perform(operation)  // first: a start() it makes happens before it returns
            runner.run(operation)
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
}
