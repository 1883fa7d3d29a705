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
    private static let trial = Mutex<Task<Bool, Never>?>(nil)

    /// Whether a greeting's whole life ran without trapping or hanging; records an issue if not.
    static func survives(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        // Under ThreadSanitizer a race in the trial process would stop every spec, and the report
        // would not reach this process's log: there the specs run the code directly.
        guard !underThreadSanitizer else { return true }
        let (task, isFirst) = trial.withLock { trial -> (Task<Bool, Never>, Bool) in
            if let trial { return (trial, false) }
            let task = Task { await runTrial(sourceLocation: sourceLocation) }
            trial = task
            return (task, true)
        }
        let survived = await task.value
        if !survived && !isFirst {
            Issue.record(
                """
                This spec did not run: in a trial run of its own, a greeting's life trapped or hung \
                (another spec of this run reports how). \(lesson.see("One critical section for all the state"))
                """, sourceLocation: sourceLocation)
        }
        return survived
    }

    /// Whether ThreadSanitizer watches this process (its runtime is linked in).
    private static let underThreadSanitizer: Bool = {
        #if canImport(Darwin)
            dlsym(UnsafeMutableRawPointer(bitPattern: -2), "__tsan_init") != nil  // RTLD_DEFAULT
        #else
            dlsym(nil, "__tsan_init") != nil  // RTLD_DEFAULT
        #endif
    }()

    private static func runTrial(sourceLocation: SourceLocation) async -> Bool {
        let result = await #expect(
            processExitsWith: .success,
            """
            A greeting's life, tried in a process of its own, trapped (a signal) or hung (exit code 3), \
            so the specs stop here instead of stopping the whole run. Most likely a lock is taken again \
            while a change is announced, on the thread that holds it: a Mutex traps ("Recursive call to \
            lock Mutex"), an NSLock waits forever. Or start() calls super.start() after announcing \
            isExecuting, which traps. Or cancel() finished a greeting that a queue then refused.
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
        queued.finish()

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

    /// Gives `condition` a short while to come true, whatever the outcome.
    private static func briefly(_ condition: () -> Bool) {
        _ = settles(within: Bound.scaled(.milliseconds(100)), condition)
    }
}
