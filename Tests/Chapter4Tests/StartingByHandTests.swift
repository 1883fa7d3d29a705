import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("A ready operation started by hand runs the way its kind says")
struct StartingByHandTests {
    /// The kinds of ready operation handed to `perform(_:)`.
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case nonConcurrent = "a non-concurrent operation"
        case concurrent = "a concurrent operation"

        var testDescription: String { rawValue }
    }

    /// What was true when `perform(_:)` returned on the thread that called it.
    struct Return: Sendable {
        var handled: Bool
        var finished: Bool
        var executing: Bool
        var caller: ObjectIdentifier
    }

    /// Calls `perform(_:)` on a new thread, which stands for any caller, and notes what it saw.
    static func perform(_ operation: Operation, on runner: ManualRunner) -> Protected<Return?> {
        let seen = Protected<Return?>(nil)
        Thread.detachNewThread {
            let caller = currentThreadIdentity()
            let handled = runner.perform(operation)
            seen.withValue {
                $0 = Return(
                    handled: handled, finished: operation.isFinished,
                    executing: operation.isExecuting, caller: caller)
            }
        }
        return seen
    }

    // A non-concurrent operation has no thread of its own: its start() runs main() where it is
    // called. A concurrent one brings its own: start() launches the work and returns. Either way,
    // perform(_:) calls start() on the calling thread and does not wait for the work.
    // Covers: C26, C30
    @Test(
        "perform(_:) starts a ready operation on the calling thread, and waits only for a non-concurrent one",
        arguments: Kind.allCases)
    func startsWhereItsKindSays(kind: Kind) async {
        let runner = ManualRunner()
        let release = Gate("the concurrent operation's work")
        let probe = ProbeOperation()
        let concurrent = ConcurrentProbe(release: release)
        let operation: Operation = kind == .nonConcurrent ? probe : concurrent
        let seen = Self.perform(operation, on: runner)
        await waitUntil(
            "perform(_:) to return for \(kind.rawValue) that was ready",
            hint: """
                perform(_:) kept the caller waiting. A concurrent operation runs on its own thread: \
                call start() and return. \(lesson.see("Starting by hand"))
                """,
            givingUpWhen: { kind == .concurrent && concurrent.isFinished ? "perform(_:) waited for it to finish" : nil }
        ) { seen.value != nil }
        defer { release.open() }
        guard let returned = seen.value else { return }
        #expect(
            returned.handled,
            """
            perform(_:) returned false for \(kind.rawValue) that was ready and not cancelled; it \
            should start it and return true. \(lesson.see("Starting by hand"))
            """)
        switch kind {
        case .nonConcurrent:
            #expect(
                returned.finished && probe.runCount == 1 && probe.ranOn == returned.caller,
                """
                When perform(_:) returned, the non-concurrent operation had \
                \(returned.finished ? "finished" : "not finished") and its work had run \
                \(probe.runCount) times, \(probe.ranOn == returned.caller ? "on" : "not on") the \
                calling thread. Its start() runs the work where it is called: call it on the \
                calling thread, not on a new one. \(lesson.see("Starting by hand"))
                """)
        case .concurrent:
            #expect(
                concurrent.startedFrom == [returned.caller] && returned.executing,
                """
                When perform(_:) returned, the concurrent operation had been started \
                \(concurrent.startedFrom.count) times, \
                \(concurrent.startedFrom.first == returned.caller ? "from" : "not from") the calling \
                thread, and was \(returned.executing ? "executing" : "not executing"). Call its \
                start() on the calling thread: it brings its own thread, and a start() left to a \
                thread of yours has not happened yet when perform(_:) reports it handled. \
                \(lesson.see("The listing and its oddity"))
                """)
        }
        release.open()
        await waitUntil("the operation to finish") { operation.isFinished }
    }

    /// When the non-concurrent operation handed to `run(_:)` becomes ready.
    enum Readiness: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case now = "ready when handed over"
        case later = "ready only after its dependency finished, next to another waiting operation"

        var testDescription: String { rawValue }
    }

    // run(_:) promises never to block its caller, and its retries share one timer queue. A
    // non-concurrent operation runs its whole work inside start(): start it on a thread of its
    // own, neither on the caller's thread nor on the thread the retries run on.
    // Covers: C30, C31
    @Test(
        "run(_:) gives a non-concurrent operation a thread of its own", arguments: Readiness.allCases)
    func runGivesNonConcurrentItsOwnThread(readiness: Readiness) async {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let release = Gate("the slow operation's work may end")
        let slow = ProbeOperation(work: { release.wait() })
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
        release.open()
        await waitUntil("the slow operation to finish once its work was released") { slow.isFinished }
        #expect(
            slow.startCount == 1,
            "The operation's start() was called \(slow.startCount) times; it should be called once. \(lesson.see("Starting by hand"))"
        )
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
