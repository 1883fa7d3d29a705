import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("A ready operation started by hand runs the way its kind says", .watched)
struct StartingByHandSpecs {
    /// The kinds of ready operation handed to `perform(_:)`.
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case nonConcurrent = "a non-concurrent operation"
        case concurrent = "a concurrent operation"
        case concurrentCallingBack = "a concurrent operation whose start() hands the runner another operation"

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

    // Look at the two branches of ManualRunner.perform(_:), one per kind of operation, and at
    // what the runner holds while it calls start(). Lessons: "Starting by hand", "The listing
    // and its oddity", "Two threads, one operation".
    // Covers: C26, C30
    // Paths: collaborators
    @Test(
        "perform(_:) starts a ready operation on the calling thread, and waits only for a non-concurrent one",
        arguments: Kind.allCases)
    func startsWhereItsKindSays(kind: Kind) async {
        let runner = ManualRunner()
        let release = Gate("the concurrent operation's work")
        let probe = ProbeOperation()
        let inner = BlockOperation {}
        let innerReturned = Gate("perform(_:) of the operation handed over from inside start()")
        let concurrent = ConcurrentProbe(
            release: release,
            onStart: {
                guard kind == .concurrentCallingBack else { return }
                runner.perform(inner)
                innerReturned.open()
            })
        let operation: Operation = kind == .nonConcurrent ? probe : concurrent
        let seen = Self.perform(operation, on: runner)
        await waitUntil(
            "perform(_:) to return for \(kind.rawValue) that was ready",
            hint: kind == .concurrentCallingBack && !innerReturned.isOpen
                ? """
                The operation's start() handed the runner another operation, and that \
                perform(_:) never returned, so neither did the first: the runner held its lock \
                while it called start(), and the call back waits for that same lock for ever. A \
                start() is the operation's code, and it may call the runner. Hold the lock for \
                the bookkeeping only, never across start(), whatever the kind. \
                \(lesson.see("Two threads, one operation"))
                """
                : """
                perform(_:) kept the caller waiting. A concurrent operation runs on its own thread: \
                call start() and return. \(lesson.see("Starting by hand"))
                """,
            givingUpWhen: {
                kind != .nonConcurrent && concurrent.isFinished ? "perform(_:) waited for it to finish" : nil
            }
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
        case .concurrent, .concurrentCallingBack:
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
        if kind == .concurrentCallingBack {
            #expect(
                inner.isFinished,
                """
                The operation's start() handed the runner a ready operation, which perform(_:) \
                did not run. \(lesson.see("Starting by hand"))
                """)
        }
        release.open()
        await waitUntil("the operation to finish") { operation.isFinished }
    }

    /// The kinds of cancelled operation handed to the runner.
    enum CancelledKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case nonConcurrent = "a cancelled non-concurrent operation"
        case waitingOnDependency = "a cancelled operation whose dependency has not finished"
        case concurrent = "a cancelled concurrent operation"

        var testDescription: String { rawValue }
    }

    // Look at the cancelled branch of ManualRunner.perform(_:): which object it marks finished.
    // Lesson: "Cancelled operations".
    // Covers: C29, C32
    // Paths: values
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
