import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("Cancelling the operation cancels its Task, and it finishes promptly")
struct CancellingTheWork {
    // cancel() must also cancel the Task that start() launched: keep the Task and call its cancel().
    // The loader's await then throws CancellationError, and the work ends and finishes the operation.
    // Covers: C24, C61
    @Test("cancel() while the fetch waits: the fetch sees the cancellation, the operation finishes, dependents run")
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
        guard
            await waitUntil(
                "the waiting fetch to see the task's cancellation",
                hint: loader.trace.lifecycle(missing: "the fetch never saw it") + "\n"
                    + "Operation.cancel() only sets isCancelled; the Task does not know unless you cancel it.\n"
                    + lesson.see("Forward cancel() to the Task"),
                { loader.trace.contains("fetch a saw cancellation") })
        else { return }
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

    // Check isCancelled in start() before launching anything: a cancelled operation goes straight to
    // finished (announcing it), with CancellationError as its result, and creates no Task.
    // Covers: C21, C50, C61
    @Test("cancelled before it starts, it finishes at once, never calls the loader, and releases its dependent")
    func cancelledBeforeStart() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        operation.cancel()
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
    }
}

/// Whether `result` is a failure with `CancellationError`.
func isCancellation(_ result: Result<Thumbnail, any Error>?) -> Bool {
    guard case .failure(let error)? = result else { return false }
    return error is CancellationError
}
