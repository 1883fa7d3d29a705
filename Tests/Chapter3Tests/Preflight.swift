import Chapter3
import Foundation
import KataTestSupport
import Synchronization
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// Runs a greeting's whole life once, in a process of its own, before any spec runs it in this one.
///
/// Code that traps (a `Mutex` re-entered while announcing, `super.start()` after announcing) or
/// deadlocks (an `NSLock` re-entered) would stop or hang every spec of the run. If the trial process
/// does either, the first spec to ask reports it, and every spec stops before touching that code.
enum Preflight {
    /// Whether a greeting's whole life ran without trapping or hanging; records an issue if not.
    ///
    /// The trial covers only what every spec does. A mistake on a path only some specs take
    /// (finishing a second time, say) is left to those specs and their own trials.
    static func survives(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await survives(
            "life", what: "a greeting's life trapped or hung", see: "One critical section for all the state",
            sourceLocation: sourceLocation
        ) {
            await runTrial(sourceLocation: sourceLocation)
        }
    }

    /// Whether calling `finish()` on a greeting that already finished, from two threads at once,
    /// runs without trapping or hanging; records an issue if not. Only the specs that finish a
    /// greeting again ask it, so a `finish()` that traps the second time costs only them.
    static func survivesFinishingAgain(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await survives(
            "finishing again", what: "finishing an already finished greeting trapped or hung",
            see: "Finish once, on every path", sourceLocation: sourceLocation
        ) {
            let result = await #expect(
                processExitsWith: .success,
                """
                A greeting that had already finished was told to finish() again, from two threads at \
                once, in a process of its own, and that process stopped (a signal) or hung (exit \
                code 3): the second finish() trapped, for example on a precondition that the \
                operation is executing, or waited on a lock that is never released. Finishing again \
                must change nothing. \(lesson.see("Finish once, on every path"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.finishAgainRun())
            }
            LastWords.explain(result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Whether calling `start()` again, while the work runs and once it finished, runs without
    /// trapping or hanging; records an issue if not. Only the spec that starts a greeting again
    /// asks it, so a `start()` that traps the second time costs only that spec.
    static func survivesStartingAgain(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await survives(
            "starting again", what: "starting a greeting again trapped or hung", see: "Steps",
            sourceLocation: sourceLocation
        ) {
            let result = await #expect(
                processExitsWith: .success,
                """
                A greeting was told to start() again while its work ran, and once more after it \
                finished, in a process of its own, and that process stopped (a signal) or hung (exit \
                code 3): a later start() trapped, for example on a precondition that the operation \
                is idle, or waited on a lock that is never released. A start() that finds the \
                greeting already started or finished returns and changes nothing. \(lesson.see("Steps"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.startAgainRun())
            }
            LastWords.explain(result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Whether calling `start()` three times on a greeting cancelled before it started runs
    /// without trapping or hanging; records an issue if not. Only the spec that does so asks it:
    /// a design that traps on a second `start()` of a running greeting, as Apple's inherited
    /// `start()` does, is judged here only on what this spec does.
    static func survivesStartingCancelledAgain(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await survives(
            "starting a cancelled greeting again",
            what: "starting a greeting cancelled before it started, three times, trapped or hung",
            see: "Finish once, on every path", sourceLocation: sourceLocation
        ) {
            let result = await #expect(
                processExitsWith: .success,
                """
                A greeting cancelled before it started was told to start() three times, in a process \
                of its own, and that process stopped (a signal) or hung (exit code 3): a later \
                start() trapped, or waited on a lock that is never released. A start() that finds the \
                greeting finished returns and changes nothing. \(lesson.see("Finish once, on every path"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.startCancelledAgainRun())
            }
            LastWords.explain(result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Whether calling `cancel()` on a greeting that finished runs without trapping or hanging;
    /// records an issue if not. Only the spec that does so asks it.
    static func survivesCancellingAfterTheEnd(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await survives(
            "cancelling after the end", what: "cancelling a greeting that had finished trapped or hung",
            see: "Finish once, on every path", sourceLocation: sourceLocation
        ) {
            let result = await #expect(
                processExitsWith: .success,
                """
                A greeting that had finished was told to cancel(), in a process of its own, and that \
                process stopped (a signal) or hung (exit code 3): the cancel() trapped, for example by \
                finishing the greeting a second time through a precondition, or waited on a lock that \
                is never released. A cancel() after the end changes nothing. \
                \(lesson.see("Finish once, on every path"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.cancelAfterTheEndRun())
            }
            LastWords.explain(result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Runs trial `name` once per test run (`TrialRuns`); the first spec to ask reports how it
    /// failed, the others that they did not run.
    private static func survives(
        _ name: String, what: String, see section: String, sourceLocation: SourceLocation,
        _ run: @escaping @Sendable () async -> Bool
    ) async -> Bool {
        await TrialRuns.survives(
            "chapter 3: \(name)", what: what, see: lesson.see(section), sourceLocation: sourceLocation, run)
    }

    private static func runTrial(sourceLocation: SourceLocation) async -> Bool {
        let result = await #expect(
            processExitsWith: .success,
            """
            A greeting's life, tried in a process of its own, trapped (a signal) or hung (exit code 3), \
            so the specs stop here instead of stopping the whole run. The status after → says which. \
            A trap (signal 4 or 5): a lock taken again while a change is announced, on the thread that \
            holds it (a Mutex traps: "Recursive call to lock Mutex"), start() calling super.start() \
            after announcing isExecuting, or cancel() finishing a greeting that a queue then refused. \
            A memory fault (signal 11): most often a stack overflow, such as a getter that reads \
            itself. A hang: an NSLock taken again on the thread that holds it waits forever.
            \(lesson.see("One critical section for all the state"))
            """,
            sourceLocation: sourceLocation
        ) {
            exit(Preflight.trialRun())
        }
        return result != nil
    }

    /// Takes greetings through every path the specs use, without judging the outcome; 3 if it hangs.
    static func trialRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let queue = makeQueue()
        let byHand = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        byHand.start()
        briefly { byHand.isFinished }

        let queued = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        let dependent = BlockOperation {}
        dependent.addDependency(queued)
        queue.enqueue([queued, dependent])
        briefly { dependent.isFinished }

        let early = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        early.cancel()
        if !early.isFinished { queue.addOperation(early) }
        briefly { early.isFinished }

        let trace = Recorder<Moment>()
        let running = TracedGreeting(trace: trace)
        queue.addOperation(running)
        briefly { trace.contains(.workPaused) }
        running.cancel()
        briefly { running.isFinished }
        _ = running.isExecuting
        return 0
    }

    /// Lets a greeting finish by itself, then tells it to finish again from two threads at once;
    /// 3 if it hangs.
    static func finishAgainRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let greeting = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        greeting.start()
        briefly { greeting.isFinished }
        let threads = [Thread { greeting.finish() }, Thread { greeting.finish() }]
        threads.forEach { $0.start() }
        greeting.finish()
        briefly { false }
        return 0
    }

    /// Starts a greeting, starts it again while its work waits, and once more after it finished;
    /// 3 if it hangs.
    static func startAgainRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        Thread.detachNewThread { greeting.start() }
        // Until the work is under way, however slow the machine: a second start() that comes
        // before it tries a different path than the specs' own.
        _ = settles(within: Bound.standard) { trace.contains(.workPaused) }
        greeting.start()
        greeting.pause.open()
        briefly { greeting.isFinished }
        greeting.start()
        return 0
    }

    /// Cancels a greeting before it starts, then starts it three times; 3 if it hangs.
    static func startCancelledAgainRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let greeting = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        greeting.cancel()
        for _ in 1...3 { greeting.start() }
        briefly { false }
        return 0
    }

    /// Lets a greeting finish by itself, then cancels it; 3 if it hangs.
    static func cancelAfterTheEndRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let greeting = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        greeting.start()
        briefly { greeting.isFinished }
        greeting.cancel()
        briefly { false }
        return 0
    }

    /// Gives `condition` a short while to come true, whatever the outcome.
    private static func briefly(_ condition: () -> Bool) {
        _ = settles(within: Bound.scaled(.milliseconds(100)), condition)
    }
}

/// Runs a spec only once the greeting's trials survived: `@Test("…", .preflight)`, or
/// `.preflightFinishingAgain` for the specs that finish a greeting a second time, or
/// `.preflightStartingAgain` for the specs that start one again while it runs or once it ended,
/// `.preflightStartingCancelledAgain` and `.preflightCancellingAfterTheEnd` for the specs that
/// do only that.
///
/// When a trial trapped or hung, the spec records the trial's issue instead of running.
struct PreflightTrait: TestTrait, TestScoping {
    /// A path beyond a greeting's life that some specs take, each tried in a process of its own.
    enum Extra: Sendable {
        case finishingAgain, startingAgain, startingCancelledAgain, cancellingAfterTheEnd
    }

    /// The path the spec also needs to survive, if any.
    var extra: Extra?

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let at = test.sourceLocation
        guard await Preflight.survives(sourceLocation: at) else { return }
        let survived =
            switch extra {
            case nil: true
            case .finishingAgain: await Preflight.survivesFinishingAgain(sourceLocation: at)
            case .startingAgain: await Preflight.survivesStartingAgain(sourceLocation: at)
            case .startingCancelledAgain: await Preflight.survivesStartingCancelledAgain(sourceLocation: at)
            case .cancellingAfterTheEnd: await Preflight.survivesCancellingAfterTheEnd(sourceLocation: at)
            }
        guard survived else { return }
        try await function()
    }
}

extension Trait where Self == PreflightTrait {
    /// Runs the spec only if a greeting's whole life survives in a trial process.
    static var preflight: Self { Self() }

    /// Runs the spec only if a greeting's life, and finishing it again, survive in trial processes.
    static var preflightFinishingAgain: Self { Self(extra: .finishingAgain) }

    /// Runs the spec only if a greeting's life, and starting it again, survive in trial processes.
    static var preflightStartingAgain: Self { Self(extra: .startingAgain) }

    /// Runs the spec only if a greeting's life, and starting a cancelled one three times, survive.
    static var preflightStartingCancelledAgain: Self { Self(extra: .startingCancelledAgain) }

    /// Runs the spec only if a greeting's life, and cancelling one that finished, survive.
    static var preflightCancellingAfterTheEnd: Self { Self(extra: .cancellingAfterTheEnd) }
}
