import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("A ready operation started by hand runs the way its kind says")
struct StartingByHandTests {
    /// What `perform(_:)` did with a non-concurrent operation, seen from the calling thread.
    struct SynchronousRun: Sendable {
        var returned: Bool
        var finishedWhenPerformReturned: Bool
        var ranOnCallingThread: Bool
    }

    /// Calls `perform(_:)` from a synchronous function and notes what was true when it returned.
    static func performHere(_ runner: ManualRunner, _ operation: ProbeOperation) -> SynchronousRun {
        let caller = currentThreadIdentity()
        let returned = runner.perform(operation)
        return SynchronousRun(
            returned: returned,
            finishedWhenPerformReturned: operation.isFinished && operation.runCount == 1,
            ranOnCallingThread: operation.ranOn == caller
        )
    }

    // A non-concurrent operation has no thread of its own: start() runs main() right there.
    // Call start() on the calling thread; do not hand it to another thread.
    // Covers: C26, C27
    @Test("a non-concurrent operation runs on the calling thread and is done when perform returns")
    func nonConcurrentRunsInPlace() async {
        let runner = ManualRunner()
        let operation = ProbeOperation()
        let run = Self.performHere(runner, operation)
        #expect(
            run.returned,
            """
            perform(_:) returned false for a ready, uncancelled operation; it should start it and \
            return true. \(lesson.see("Starting by hand"))
            """)
        #expect(
            run.finishedWhenPerformReturned,
            """
            When perform(_:) returned, the non-concurrent operation had not finished its work \
            (finished: \(operation.isFinished), runs: \(operation.runCount)). Its start() runs the \
            work synchronously: call it on the calling thread, not on a new one. \
            \(lesson.see("Starting by hand"))
            """)
        #expect(
            run.ranOnCallingThread,
            """
            The non-concurrent operation's work did not run on the thread that called \
            perform(_:). A non-concurrent operation runs where start() is called. \
            \(lesson.see("Starting by hand"))
            """)
        // Let a starter that ran the work elsewhere finish before the operation goes away.
        await waitUntil("the operation to finish") { operation.isFinished }
    }

    // A concurrent operation brings its own thread: start() only launches the work and returns.
    // Start it from the calling thread and return; never wait for it there.
    // Covers: C30
    @Test("a concurrent operation is started without blocking the caller")
    func concurrentDoesNotBlock() async {
        let runner = ManualRunner()
        let release = Gate("the concurrent operation's work")
        let operation = ThreadedOperation { release.wait() }
        let performReturned = Protected<(finished: Bool, executing: Bool)?>(nil)
        Thread.detachNewThread {
            runner.perform(operation)
            performReturned.withValue { $0 = (operation.isFinished, operation.isExecuting) }
        }
        await waitUntil(
            "perform(_:) to return while the concurrent operation's work was still running",
            hint: """
                perform(_:) kept the caller waiting for the whole operation. A concurrent \
                operation runs on its own thread: call start() and return. \
                \(lesson.see("Starting by hand"))
                """
        ) { performReturned.value != nil }
        if let state = performReturned.value {
            #expect(
                state.executing && !state.finished,
                """
                When perform(_:) returned, the operation was \
                \(state.finished ? "already finished" : "not executing"); it should have been \
                started and still running, since its work waits for the spec. \
                \(lesson.see("Starting by hand"))
                """)
        }
        release.open()
        await waitUntil("the concurrent operation to finish once its work was released") {
            operation.isFinished && performReturned.value != nil
        }
    }

    /// The kinds of cancelled operation handed to the runner.
    enum CancelledKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case nonConcurrent = "a cancelled non-concurrent operation"
        case waitingOnDependency = "a cancelled operation whose dependency has not finished"
        case concurrent = "a cancelled concurrent operation"

        var testDescription: String { rawValue }
    }

    // Listing 2-8 marks the runner finished instead of the operation. Only the operation's own
    // start() can move it to finished: call start() on a cancelled operation; it skips the work.
    // Covers: C29, C32
    @Test(
        "a cancelled operation is moved to finished without running its work",
        arguments: CancelledKind.allCases)
    func cancelledIsFinished(kind: CancelledKind) async {
        let runner = ManualRunner()
        let workRan = Protected(false)
        let operation: Operation
        switch kind {
        case .nonConcurrent:
            operation = BlockOperation { workRan.withValue { $0 = true } }
        case .waitingOnDependency:
            operation = BlockOperation { workRan.withValue { $0 = true } }
            operation.addDependency(BlockOperation {})
        case .concurrent:
            operation = ThreadedOperation { workRan.withValue { $0 = true } }
        }
        operation.cancel()
        let returned = runner.perform(operation)
        #expect(
            returned,
            """
            perform(_:) returned false for \(kind.rawValue); a cancelled operation is done with \
            as soon as it is finished, so it must never be retried. \
            \(lesson.see("Cancelled operations"))
            """)
        #expect(
            operation.isFinished,
            """
            After perform(_:), \(kind.rawValue) was not finished. Something was marked finished, \
            but not the operation: call the operation's own start(), which moves a cancelled \
            operation to finished. \(lesson.see("Cancelled operations"))
            """)
        #expect(
            !workRan.value,
            "The work of \(kind.rawValue) ran; cancelled work must be skipped. \(lesson.see("Cancelled operations"))"
        )
    }
}
