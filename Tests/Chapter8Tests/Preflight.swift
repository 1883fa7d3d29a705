import Chapter8
import Foundation
import KataTestSupport
import Testing

/// Tries a thumbnail operation's paths in processes of their own before any spec takes them here.
///
/// A lock that is not re-entrant, held while announcing, blocks for good (`NSLock`) or traps
/// (`Mutex`) the first time Linux reads a flag back; a `start()` that calls `super.start()` traps
/// the second time it is called. Either would stop or hang every spec of the run. Each trial
/// covers the paths of the specs that ask for it, so a mistake on one path costs only those specs.
enum Preflight {
    /// Whether an operation's life (queued, started by hand, finished by its work) survives.
    static func survivesLife(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "thumbnailLife", what: "a thumbnail operation's life trapped or hung",
            see: lesson.see("Finish when the work ends, once"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("thumbnailLife")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected an operation's life (started by a queue and by hand, its work ending, a \
                dependent released) to run to its end. Tried in a process of its own, it trapped (a \
                signal) or hung (exit code 3), so the specs stop here instead of stopping the whole \
                run. The usual cause is a lock held while announcing a change that is not \
                re-entrant: on Linux, didChangeValue reads the flag back at once, on the same \
                thread, and a Mutex locked again traps while an NSLock locked again waits forever. \
                Use a re-entrant lock, or announce with the lock released.
                \(lesson.see("Finish when the work ends, once"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.lifeRun())
            }
            LastWords.explain("thumbnailLife", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Whether cancelling an operation before it starts, while it works and as it starts survives.
    static func survivesCancelling(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "thumbnailCancelled", what: "cancelling a thumbnail operation trapped or hung",
            see: lesson.see("Forward cancel() to the Task"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("thumbnailCancelled")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected cancel() to mark the operation and reach its Task, whenever it comes. Tried \
                in a process of its own (cancelled before a queue or a caller started it, while its \
                fetch waited, and right after start() on another thread), the process trapped (a \
                signal) or hung (exit code 3). Look for a force unwrap of a Task that is not there \
                yet, or a lock that cancel() holds while it finishes the operation and that \
                finishing takes again. \(lesson.see("Forward cancel() to the Task"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.cancellingRun())
            }
            LastWords.explain("thumbnailCancelled", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Whether `finish(with:)` on a running operation from two threads at once, and on a finished
    /// one, survives.
    static func survivesFinishingAgain(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "thumbnailFinishedAgain", what: "finishing a thumbnail operation again trapped or hung",
            see: lesson.see("Finish when the work ends, once"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("thumbnailFinishedAgain")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected a finish(with:) after the first to change nothing. Tried in a process of its \
                own (two finishes at once on a running operation, then two more once it had \
                finished), the process trapped (a signal) or hung (exit code 3): a later finish \
                stopped on a precondition that the operation is executing, or waited on a lock that \
                is never released. Finishing again must return quietly.
                \(lesson.see("Finish when the work ends, once"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.finishAgainRun())
            }
            LastWords.explain("thumbnailFinishedAgain", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Whether `start()` called again, while the fetch waits and once the operation finished, survives.
    static func survivesStartingAgain(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "thumbnailStartedAgain", what: "starting a thumbnail operation again trapped or hung",
            see: lesson.see("Start launches a Task and returns"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("thumbnailStartedAgain")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected a later start() to find the operation already started, or finished, and \
                return without changing anything. Tried in a process of its own, start() called \
                again stopped that process (a signal) or hung it (exit code 3). The usual cause is a \
                start() that calls super.start(): the inherited start() keeps its own record of the \
                operation, and called a second time it traps ("receiver is already executing"), \
                because it does the bookkeeping of work that ends when main() returns. Override \
                start() completely, without super.start(), and let the first start() claim the \
                operation under your lock. \(lesson.see("Start launches a Task and returns"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.startAgainRun())
            }
            LastWords.explain("thumbnailStartedAgain", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Takes operations through the paths every spec uses, without judging them; 3 if it hangs.
    static func lifeRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let name = "thumbnailLife"
        let loader = ScriptedLoader()
        let queue = makeQueue()
        let queued = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: queued)
        LastWords.note(name, "a queue started the operation, which was not heard of again.")
        queue.enqueue([queued, dependent])
        briefly { loader.isWaiting("fetch a") }
        LastWords.note(name, "a queue started the operation; reading its flags then never returned.")
        _ = (queued.isExecuting, queued.isFinished, queued.result)
        LastWords.note(name, "the fetch and then the resize returned, and the operation was finishing.")
        loader.resume("fetch a")
        briefly { loader.isWaiting("resize a") }
        loader.resume("resize a")
        briefly { dependent.isFinished }
        _ = (queued.isExecuting, queued.isFinished, queued.result)

        LastWords.note(name, "start() was called by hand on a thread of its own, and the work's fetch threw.")
        let byHand = TracedThumbnail("b", loader: loader)
        byHand.qualityOfService = .utility
        loader.fail("fetch b", with: LoaderError.missing("b"))
        Thread.detachNewThread { byHand.start() }
        briefly { byHand.isFinished }
        _ = (byHand.isExecuting, byHand.isFinished, byHand.result)
        loader.releaseAll()
        withExtendedLifetime((queue, queued, dependent, byHand)) {}
        return 0
    }

    /// Cancels operations before they start, while their fetch waits and right after start() on
    /// another thread; 3 if it hangs.
    static func cancellingRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let name = "thumbnailCancelled"
        let loader = ScriptedLoader()
        let queue = makeQueue()
        LastWords.note(name, "cancel() was called on an operation that nobody had started yet.")
        let early = TracedThumbnail("a", loader: loader)
        early.cancel()
        LastWords.note(name, "a queue started an operation that was cancelled before it started.")
        if !early.isFinished { queue.addOperation(early) }
        briefly { early.isFinished }

        LastWords.note(name, "start() was called by hand on an operation cancelled before it started.")
        let byHand = TracedThumbnail("b", loader: loader)
        byHand.cancel()
        byHand.start()

        LastWords.note(name, "cancel() was called while the operation's fetch waited.")
        let running = TracedThumbnail("c", loader: loader)
        queue.addOperation(running)
        briefly { loader.isWaiting("fetch c") }
        running.cancel()
        briefly { running.isFinished }

        LastWords.note(name, "cancel() was called right after start() was called on another thread.")
        let racer = TracedThumbnail("d", loader: loader)
        Thread.detachNewThread { racer.start() }
        racer.cancel()
        briefly { racer.isFinished }
        _ = (racer.isExecuting, racer.result)
        loader.releaseAll()
        withExtendedLifetime((queue, early, byHand, running, racer)) {}
        return 0
    }

    /// Finishes a running operation from two threads at once, then twice more once it finished;
    /// 3 if it hangs.
    static func finishAgainRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let name = "thumbnailFinishedAgain"
        let loader = ScriptedLoader()
        let queue = makeQueue()
        let operation = TracedThumbnail("a", loader: loader)
        queue.addOperation(operation)
        briefly { loader.isWaiting("fetch a") }
        LastWords.note(name, "finish(with:) was called from two threads at once while the fetch waited.")
        let outcome = Result<Thumbnail, any Error>.success(Thumbnail(name: "a", width: 1))
        [Thread { operation.finish(with: outcome) }, Thread { operation.finish(with: outcome) }].forEach {
            $0.start()
        }
        briefly { operation.isFinished }
        LastWords.note(name, "finish(with:) was called twice more on the finished operation.")
        operation.finish(with: .failure(LoaderError.missing("late")))
        operation.finish(with: outcome)
        loader.releaseAll()
        lingerBriefly()  // lets the work's own late finish come in
        withExtendedLifetime((queue, operation)) {}
        return 0
    }

    /// Starts an operation on a queue, then again while its fetch waits and once more after it
    /// finished; 3 if it hangs.
    static func startAgainRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let name = "thumbnailStartedAgain"
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let queue = makeQueue()
        queue.addOperation(operation)
        briefly { loader.isWaiting("fetch a") }
        LastWords.note(
            name,
            "a queue started the operation, and start() was called again while its fetch waited; "
                + "the process ended inside that call.")
        operation.start()
        loader.releaseAll()
        briefly { operation.isFinished }
        LastWords.note(
            name,
            "start() was called again while the fetch waited and returned; start() was called once "
                + "more after the operation finished, and the process ended inside that call or just after.")
        operation.start()
        lingerBriefly()  // lets a Task that the last start() made begin
        withExtendedLifetime((queue, operation)) {}
        return 0
    }

    /// Gives `condition` a short while to come true, whatever the outcome.
    private static func briefly(_ condition: () -> Bool) {
        _ = settles(within: Bound.scaled(.milliseconds(100)), condition)
    }

    /// Leaves a short window for a late effect of the last call (a Task it made, a late finish).
    private static func lingerBriefly() {
        _ = settles(within: Bound.scaled(.milliseconds(50))) { false }
    }
}

/// Runs a spec only once the trials of the paths it takes survived: `.preflight` for an
/// operation's life, and the variants for the specs that also cancel, finish again or start again.
///
/// When a trial trapped or hung, the spec records the trial's issue instead of running.
struct PreflightTrait: TestTrait, TestScoping {
    enum Path: Sendable {
        case life, cancelling, finishingAgain, startingAgain
    }

    /// The path the spec takes besides an operation's life.
    var path = Path.life

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Both trials at once: each costs a process start.
        async let lifeSurvived = Preflight.survivesLife(sourceLocation: test.sourceLocation)
        async let pathSurvived = Self.survives(path, sourceLocation: test.sourceLocation)
        guard await lifeSurvived, await pathSurvived else { return }
        try await function()
    }

    private static func survives(_ path: Path, sourceLocation at: SourceLocation) async -> Bool {
        switch path {
        case .life: true
        case .cancelling: await Preflight.survivesCancelling(sourceLocation: at)
        case .finishingAgain: await Preflight.survivesFinishingAgain(sourceLocation: at)
        case .startingAgain: await Preflight.survivesStartingAgain(sourceLocation: at)
        }
    }
}

extension Trait where Self == PreflightTrait {
    /// Runs the spec only if an operation's life survives in a trial process.
    static var preflight: Self { Self() }

    /// Runs the spec only if an operation's life, and cancelling one, survive in trial processes.
    static var preflightCancelling: Self { Self(path: .cancelling) }

    /// Runs the spec only if an operation's life, and finishing one again, survive in trial processes.
    static var preflightFinishingAgain: Self { Self(path: .finishingAgain) }

    /// Runs the spec only if an operation's life, and starting one again, survive in trial processes.
    static var preflightStartingAgain: Self { Self(path: .startingAgain) }
}
