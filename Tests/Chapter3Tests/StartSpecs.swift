import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("start() launches the work and returns before the work is done")
struct StartReturnsEarly {
    // If start() only returns when the gate opens, it does the work itself: launch it on the queue instead.
    // If isAsynchronous is false, override it; if isFinished stays false, the work never called finish().
    // Covers: C17, C18, C19
    @Test("start() returns while the work is paused, and the greeting is there once it finishes")
    func startReturnsBeforeTheWorkEnds() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let greeting = TracedGreeting(trace: trace, gate: gate)

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
                    + lesson.see("The steps"), { trace.contains(.startReturned) })
        else { return }
        await waitUntil(
            "the work to begin on the greeting's queue",
            hint: trace.lifecycle(missing: "work never began") + "\n" + lesson.see("The steps")
        ) { trace.contains(.workPaused) }
        #expect(
            !trace.contains(.workOffItsQueue),
            """
            The work ran on some other thread, not on the queue passed to GreetingOperation(queue:). \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("The steps"))
            """)
        #expect(
            greeting.isExecuting && !greeting.isFinished,
            """
            Right after start() returned, with the work still paused, the greeting reported \
            isExecuting \(greeting.isExecuting) and isFinished \(greeting.isFinished); expected true and false.
            \(lesson.see("The pattern"))
            """)

        trace.record(.gateOpened)
        gate.open()
        guard
            await waitUntil(
                "isFinished to turn true after the work ended",
                hint: trace.lifecycle(missing: "isFinished never turned true") + "\n"
                    + lesson.see("Finish once, on every path"), { greeting.isFinished })
        else { return }
        trace.record(.finishedSeen)

        #expect(
            trace.recorded(.startReturned, before: .workResumed),
            """
            The work went on before start() returned: start() waited for the work. \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("The steps"))
            """)
        #expect(
            !greeting.isExecuting,
            "A finished greeting still reports isExecuting true. \(lesson.see("Finish once, on every path"))")
        #expect(
            greeting.greeting == "Hello, Ada! Goodbye, Ada!",
            """
            Once finished, the greeting should read "Hello, Ada! Goodbye, Ada!", but it was \
            \(String(describing: greeting.greeting)).
            \(lesson.see("The steps"))
            """)
    }
}
