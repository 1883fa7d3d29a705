import Chapter2
import Foundation
import KataTestSupport
import Testing

/// Asks for results too early in a process of its own before any spec does so here.
///
/// A `result()` that force-unwraps a value not stored yet traps, and one that waits for the
/// operation to finish never returns for an operation no queue has run (or, asked inside the
/// method, for its own operation). Either would stop or hang every spec of the run; tried first,
/// it costs only the specs that ask that early.
enum Preflight {
    /// Whether asking `result()` before the queue ran the operation, after it was cancelled and
    /// from inside the running method survives; records an issue that says how if not.
    static func survivesAskingEarly(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "invocationAskedEarly", what: "asking result() before the operation finished trapped or hung",
            see: lesson.see("Results, cancellation and errors"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("invocationAskedEarly")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected result() to answer at once, before the operation finished too: throw \
                InvocationError.notFinished (or .cancelled) when there is no value yet. Tried in a \
                process of its own, asking that early stopped the process (a signal) or hung it (exit \
                code 3). A trap: result() force-unwrapped a value that main() had not stored yet. A \
                hang: result() waited for the operation to finish, which an operation that no queue \
                has yet never does, and one asked from inside its own method cannot. result() reports \
                what there is now; a caller who wants to wait uses the completion block or a dependency.
                \(lesson.see("Results, cancellation and errors"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.askingEarlyRun())
            }
            LastWords.explain("invocationAskedEarly", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Asks for results before queueing, after a cancel and inside the method; 3 if it hangs.
    static func askingEarlyRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let name = "invocationAskedEarly"
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let operation = InvocationOperation(target: pantry, method: Pantry.count, argument: "barley")
        let cancelled = InvocationOperation(target: pantry, method: Pantry.count, argument: "millet")
        pantry.created.open()
        LastWords.note(name, "result() was asked of an operation that no queue had yet, and that call never returned.")
        _ = Answer(asking: operation)
        cancelled.cancel()
        LastWords.note(
            name, "result() was asked of an operation cancelled before any queue had it, and that call never returned.")
        _ = Answer(asking: cancelled)
        pantry.whileRunning { _ = Answer(asking: operation) }
        LastWords.note(
            name,
            "result() was asked from inside count(barley) while it ran on the queue, and that call never returned.")
        queue.enqueue([operation, cancelled])
        // A result() that waits for its own operation, asked inside the method, never lets it finish.
        let finished = settles(within: Bound.scaled(.seconds(1))) { operation.isFinished && cancelled.isFinished }
        return finished ? 0 : 3
    }
}

/// Runs a spec that asks for a result before the operation finished only once asking that early
/// survived in a trial process: `@Test("…", .preflightAskingEarly)`.
///
/// When the trial trapped or hung, the spec records the trial's issue instead of running.
struct PreflightTrait: TestTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard await Preflight.survivesAskingEarly(sourceLocation: test.sourceLocation) else { return }
        try await function()
    }
}

extension Trait where Self == PreflightTrait {
    /// Runs the spec only if asking for results early survives in a trial process.
    static var preflightAskingEarly: Self { Self() }
}
