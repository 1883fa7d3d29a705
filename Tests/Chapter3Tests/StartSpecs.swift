import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("start() launches the work and returns before the work is done")
struct StartReturnsEarly {
    // Look at isAsynchronous and start() in AsyncOperation, and execute() in GreetingOperation.
    // Read "The pattern" and "Your own start(), never the inherited one".
    // Covers: C17, C18, C19
    @Test("start() returns while the work is paused, and the greeting is there once it finishes", .preflight)
    func startReturnsBeforeTheWorkEnds() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }

        #expect(
            greeting.isAsynchronous,
            """
            isAsynchronous is false, so the greeting tells everyone its start() does the work before \
            returning. An operation that launches its work elsewhere must say so.
            \(lesson.see("The pattern"))
            """)

        Thread.detachNewThread { greeting.start() }
        guard
            await waitUntil(
                "start() to return while the work waits at the gate",
                hint: trace.lifecycle(missing: "start never returned") + "\n"
                    + "start() must launch the work on the greeting's queue and return at once.\n"
                    + lesson.see("Steps"),
                givingUpWhen: { greeting.isFinished ? "the greeting finished before start() returned" : nil },
                { trace.contains(.startReturned) })
        else { return }
        guard await waitForPause(greeting) else { return }
        #expect(
            !trace.contains(.workOffItsQueue),
            """
            The work ran on some other thread, not on the queue passed to GreetingOperation(queue:). \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("Steps"))
            """)
        #expect(
            greeting.isExecuting && !greeting.isFinished,
            """
            Right after start() returned, with the work still paused, the greeting reported \
            isExecuting \(greeting.isExecuting) and isFinished \(greeting.isFinished); expected true and false.
            \(lesson.see("The pattern"))
            """)
        #expect(
            !trace.contains(.mainRan(executing: false)),
            """
            main() ran before the greeting reported isExecuting true. The inherited start() runs main() \
            at once: an asynchronous operation's start() replaces it and never calls super.start(). \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("Your own start(), never the inherited one"))
            """)

        trace.record(.gateOpened)
        greeting.pause.open()
        guard await waitForFinished(greeting) else { return }
        #expect(
            trace.recorded(.startReturned, before: .workResumed),
            """
            The work went on before start() returned: start() waited for the work. \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("Steps"))
            """)
        #expect(
            !greeting.isExecuting,
            "A finished greeting still reports isExecuting true. \(lesson.see("Finish once, on every path"))")
        #expect(
            greeting.greeting == "Hello, Ada! Goodbye, Ada!",
            """
            Once finished, the greeting should read "Hello, Ada! Goodbye, Ada!", but it was \
            \(String(describing: greeting.greeting)).
            \(lesson.see("Steps"))
            """)
    }

    // Look at the order of things in AsyncOperation.start(): what is set, announced and launched when.
    // Read "Your own start(), never the inherited one".
    // Covers: C19, C22
    @Test("work that ends before start() returns leaves the greeting finished, not executing", .preflight)
    func quickWorkLeavesItFinished() async {
        let trace = Recorder<Moment>()
        // The work does not pause, and execute() returns only once the work has ended.
        let greeting = TracedGreeting(trace: trace, pause: Pause(open: true), waitsForQuickWork: true)
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()
        queue.addOperation(dependent)

        Thread.detachNewThread { greeting.start() }
        guard
            await waitUntil(
                "start() to return",
                hint: trace.lifecycle(missing: "start never returned") + "\n" + lesson.see("Steps"),
                { trace.contains(.startReturned) })
        else { return }
        guard await waitForFinished(greeting) else { return }
        #expect(
            !greeting.isExecuting,
            """
            The work ended before start() returned, and now the greeting reports isExecuting true and \
            isFinished true, for good. start() launched the work before it set isExecuting, so the end of \
            the work came first and start() then marked a finished operation as executing. \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("Your own start(), never the inherited one"))
            """)
        await waitForEffect(
            .sentinelRan, of: greeting, "the sentinel that depends on the greeting to run",
            why: "Nobody heard that the greeting finished: announce isFinished after setting the flag.")
    }
}
