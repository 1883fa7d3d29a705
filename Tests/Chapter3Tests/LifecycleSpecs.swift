import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("A greeting's whole life ends finished, without trapping or hanging", .watched)
struct WholeLifeEndsFinished {
    // A crash or a hang here stops only this spec: it runs in a process of its own. Look at the locks
    // in AsyncOperation and at cancel(). Read "One critical section for all the state".
    // Covers: C21, C23, C24
    @Test("started, cancelled before start, and cancelled while running: each ends finished")
    func wholeLifeEndsFinished() async {
        let outcome = await #expect(
            processExitsWith: .success,
            """
            In a process of its own, greetings that are started, cancelled before start, and cancelled \
            while running must all end finished. Exit code 3: something hung, such as an NSLock taken \
            again on the thread that holds it; 4, 5 or 6: the started, the cancelled-before-start or the \
            cancelled-while-running greeting never finished. A signal: your code trapped, such as a Mutex \
            held while announcing ("Recursive call to lock Mutex"), or super.start() after announcing \
            isExecuting.
            \(lesson.see("One critical section for all the state"))
            """
        ) {
            exit(WholeLife.run())
        }
        LastWords.explain(outcome)
    }
}

/// The lifecycle the exit test runs, with an exit code for each way it can go wrong.
enum WholeLife {
    /// Runs three greetings to the end; returns 0, or the code of the first that never finished.
    static func run() -> Int32 {
        exitIfStillRunning(after: Bound.standard, status: 3)
        let started = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        started.start()
        guard settles({ started.isFinished }) else { return 4 }

        let early = TracedGreeting(trace: Recorder(), pause: Pause(open: true))
        early.cancel()
        early.start()
        guard settles({ early.isFinished }) else { return 5 }

        let trace = Recorder<Moment>()
        let running = TracedGreeting(trace: trace)
        running.start()
        guard settles({ trace.contains(.workPaused) }) else { return 6 }
        running.cancel()
        guard settles({ running.isFinished }) else { return 6 }
        return 0
    }

    /// Whether `condition` comes true soon; a greeting whose pause is open ends at once.
    private static func settles(_ condition: () -> Bool) -> Bool {
        KataTestSupport.settles(within: Bound.scaled(.milliseconds(400)), condition)
    }
}
