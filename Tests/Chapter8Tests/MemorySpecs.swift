import Chapter8
import Foundation
import KataTestSupport
import Testing

/// The ways an operation's life can end, for the memory spec.
enum Exit: String, CaseIterable, Sendable, CustomStringConvertible {
    case succeeded = "its work succeeded"
    case failed = "its fetch threw"
    case cancelledWhileWorking = "it was cancelled while its fetch waited"
    case cancelledBeforeStart = "it was cancelled before the queue started it"
    case cancelledWithTheRest = "its queue cancelled all its operations"
    case neverQueued = "its owner let go of it without queueing it"

    var description: String { rawValue }
}

@Suite("Nothing keeps a thumbnail operation alive once it is over", .watched)
struct OperationMemory {
    // Look at what still points at the operation once it is over: a registry that lets go only
    // on success, a completion block or closure the operation sets on itself that captures it,
    // and the lesson's "Finish when the work ends, once". Which exit keeps it?
    // Covers: C61
    // Paths: memory, collaborators
    @Test(
        "once it is over, by any exit, and its owner let go, the operation is freed", .preflight,
        arguments: Exit.allCases)
    func operationIsFreedAfterEveryExit(exit: Exit) async {
        let loader = ScriptedLoader()
        let queue = makeQueue()
        var operation: ThumbnailOperation? = ThumbnailOperation(
            imageName: "a", width: thumbnailWidth, loader: loader)
        let freed = WeakReference(operation)
        defer { loader.endSpec(keepingAlive: queue) }

        switch exit {
        case .succeeded:
            loader.releaseAll()
            queue.addOperation(operation!)
        case .failed:
            loader.fail("fetch a", with: LoaderError.missing("a"))
            queue.addOperation(operation!)
        case .cancelledWhileWorking:
            queue.addOperation(operation!)
            guard await waitUntil("the fetch of a to begin", { loader.isWaiting("fetch a") }) else { return }
            operation!.cancel()
        case .cancelledBeforeStart:
            operation!.cancel()
            // A queue refuses (traps on) an operation that is already finished: check first.
            if operation!.isFinished {
                Issue.record(
                    """
                    cancel() finished an operation that was never started. Only start() may finish \
                    it: a queue refuses to run an operation that is already finished (it stops the \
                    program).
                    \(lesson.see("Forward cancel() to the Task"))
                    """)
                return
            }
            queue.addOperation(operation!)
        case .cancelledWithTheRest:
            queue.addOperation(operation!)
            guard await waitUntil("the fetch of a to begin", { loader.isWaiting("fetch a") }) else { return }
            queue.cancelAllOperations()
        case .neverQueued:
            break
        }
        guard
            await waitUntil(
                "the queue to drain after \(exit)",
                hint: loader.trace.lifecycle(missing: "the operation never finished") + "\n"
                    + lesson.see("Finish when the work ends, once"),
                { queue.operationCount == 0 })
        else { return }
        let outcome = describe(operation?.result)
        operation = nil
        // Once the operation is over, a fetch that still waits after the cancel returned belongs to
        // a Task nobody cancelled: it holds what it captured for as long as the fetch waits, so the
        // spec gives up once that has lasted a while instead of waiting out the whole bound.
        let stillFetching = { loader.isWaiting("fetch a") && !loader.trace.contains("fetch a saw cancellation") }
        var fetchingSince: ContinuousClock.Instant?
        await waitUntil(
            "the operation to be freed once \(exit) and nothing else held it",
            hint: """
                The operation ended with \(outcome) and neither the spec nor the queue holds it any more, \
                yet it is still in memory: something it made keeps it (a registry that lets go only on \
                success, a closure or completion block stored on the operation that captures it). A \
                finished operation must keep nothing alive, itself included, on every way out.
                \(lesson.see("Finish when the work ends, once"))
                """,
            givingUpWhen: {
                guard stillFetching() else {
                    fetchingSince = nil
                    return nil
                }
                let since = fetchingSince ?? ContinuousClock.now
                fetchingSince = since
                guard ContinuousClock.now - since >= Bound.scaled(.milliseconds(200)) else { return nil }
                return """
                    the operation is over (\(outcome)) while its fetch still waits and never saw a \
                    cancellation: cancel() did not reach the Task, which works on for nobody and keeps \
                    what it captured. \(lesson.see("Forward cancel() to the Task"))
                    """
            },
            { freed.value == nil })
    }
}
