import Chapter4
import Foundation
import KataTestSupport
import Testing

// The specs below hold a start() or a work at a gate on whatever thread the runner chose. Where
// a runner chooses Dispatch's worker threads, three held at once stall the whole test process for
// a second or more (see Tests/PLATFORM.md), so each suite runs its cases one at a time and at
// most two are held together.

@Suite("A non-concurrent operation handed to run(_:) holds up no one", .serialized, .watched)
struct OwnThreadSpecs {
    /// When the non-concurrent operation handed to `run(_:)` becomes ready.
    enum Readiness: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case now = "ready when handed over"
        case later = "ready only after its dependency finished, next to another waiting operation"

        var testDescription: String { rawValue }
    }

    // Look at where ManualRunner.run(_:) and its retries call start() for a non-concurrent
    // operation, and at what perform(_:) returns for it while it runs there. Lessons: "Starting
    // by hand", "Retrying with a timer".
    // Covers: C27, C30, C31
    // Paths: interference
    @Test(
        "run(_:) gives a non-concurrent operation a thread of its own, and perform(_:) leaves it alone there",
        arguments: Readiness.allCases)
    func runGivesNonConcurrentItsOwnThread(readiness: Readiness) async {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let release = Gate("the slow operation's work may end")
        let slow = ProbeOperation(work: { release.wait(timeout: Bound.standard * 3) })
        defer { release.open() }
        switch readiness {
        case .now:
            let caller = Protected<ObjectIdentifier?>(nil)
            let returned = Gate("run(_:) returned")
            Thread.detachNewThread {
                caller.withValue { $0 = currentThreadIdentity() }
                runner.run(slow)
                returned.open()
            }
            let ranOnCaller = { slow.ranOn != nil && slow.ranOn == caller.value }
            await waitUntil(
                "run(_:) to return while the operation's work was still running",
                hint: """
                    run(_:) started the non-concurrent operation on the thread that called it, \
                    which then waits for the whole work. Give it a thread of its own. \
                    \(lesson.see("Starting by hand"))
                    """,
                givingUpWhen: { ranOnCaller() ? "its work ran on the thread that called run(_:)" : nil }
            ) { returned.isOpen }
            await waitUntil("the operation's work to begin after run(_:)") { slow.runCount == 1 }
        case .later:
            let slowDependency = BlockOperation {}
            let otherDependency = BlockOperation {}
            let other = ProbeOperation()
            slow.addDependency(slowDependency)
            other.addDependency(otherDependency)
            runner.run(slow)
            runner.run(other)
            slowDependency.start()
            let began = await waitUntil(
                "the runner to start the slow operation once its dependency finished",
                timeout: Chapter4Bound.retry,
                hint: """
                    Nothing retried it. A Timer fires only while the run loop of the thread that \
                    scheduled it runs. Keep one retry going for each waiting operation. \
                    \(lesson.see("Retrying with a timer"))
                    """
            ) { slow.runCount == 1 }
            guard began else { return }
            otherDependency.start()
            await waitUntil(
                "the other operation to start while the slow one's work was still running",
                timeout: Chapter4Bound.retry,
                hint: """
                    The slow operation's work holds the thread the retries run on, so no other \
                    operation is retried until it ends. Start a retried non-concurrent operation \
                    on a thread of its own. \(lesson.see("Retrying with a timer"))
                    """
            ) { other.isFinished }
        }
        if slow.runCount == 1 && !slow.isFinished {
            let handled = runner.perform(slow)  // executing on the runner's thread: leave it alone
            #expect(
                handled,
                """
                While the operation's work ran on the thread run(_:) gave it, perform(_:) returned \
                false, which means "not ready yet, try again later": a caller that tries again \
                keeps calling it for as long as the work runs. An operation that is executing, or \
                that another thread is starting, is handled: leave it alone and return true. \
                \(lesson.see("Steps"))
                """)
        }
        release.open()
        await waitUntil("the slow operation to finish once its work was released") { slow.isFinished }
        #expect(
            slow.startCount == 1,
            "The operation's start() was called \(slow.startCount) times; it should be called once. \(lesson.see("Starting by hand"))"
        )
    }

}

@Suite("An operation handed over by two threads at once is started once", .serialized, .watched)
struct RivalsSpecs {
    /// The two threads that hand the same operation to the runner at the same moment.
    enum Rivals: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case twoCallers = "two threads call perform(_:)"
        case timerAndCaller = "the retry timer and a thread calling perform(_:)"

        var testDescription: String { rawValue }
    }

    // Look at the gap between the checks and start() in ManualRunner.perform(_:) and in the
    // retries, when two threads get there together. Lesson: "Two threads, one operation".
    // Covers: C27, C28
    // Paths: interference
    @Test(
        "an operation handed over by two threads at once is started once", arguments: Rivals.allCases)
    func startedOnceByRivals(rivals: Rivals) async {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let firstStartMayGoOn = Gate("the first start() may go on")
        // The first start() is held before the operation begins executing: for the other thread,
        // the operation looks ready and not started, exactly as it did to the first.
        // It waits longer than the spec waits for the second thread, so a second thread that waits
        // for the first start() to end is caught, not released by the gate's own bound.
        let operation = ProbeOperation(onStart: { count in
            if count == 1 { firstStartMayGoOn.wait(timeout: Bound.standard * 3) }
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
