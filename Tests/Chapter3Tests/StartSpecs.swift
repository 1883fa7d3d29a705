import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("start() launches the work and returns before the work is done", .watched)
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

    // Look at the first check in AsyncOperation.start(): what does a second call find?
    // Read "Your own start(), never the inherited one".
    // Covers: C18
    // Paths: reuse
    @Test(
        "start() called again, while the work runs and after it ended, launches nothing and announces nothing",
        .preflightStartingAgain)
    func startingAgainChangesNothing() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        Thread.detachNewThread { greeting.start() }
        guard await waitForPause(greeting) else { return }
        let announcedBefore = greeting.announcements.count

        guard await startAgain(greeting, "while the work waits at the gate") else { return }
        trace.record(.gateOpened)
        greeting.pause.open()
        guard await waitForFinished(greeting) else { return }
        guard await startAgain(greeting, "after the greeting finished") else { return }
        // Whatever a later start() launched on the work's serial queue has run once this has.
        guard await waitForWorkQueue(of: greeting) else { return }

        // Finishing announces isExecuting false; only "executing true" can come from a later start().
        let extra = greeting.announcements.all.dropFirst(announcedBefore).filter {
            $0.key == .isExecuting && !$0.isWill && $0.value
        }
        #expect(
            extra.isEmpty,
            """
            start() was called again and announced \(extra.map(\.description)): a greeting that already \
            started, or already finished, was announced as executing once more. The first start() \
            claims the greeting; a later one finds it claimed and returns. \(trace.lifecycle(missing: "…"))
            \(lesson.see("Your own start(), never the inherited one"))
            """)
        let launches = trace.all.filter { $0 == .workPaused }.count
        #expect(
            launches == 1 && greeting.isFinished && !greeting.isExecuting,
            """
            After start() was called again, the work had begun \(launches) times (expected once), and \
            the greeting reported isFinished \(greeting.isFinished), isExecuting \(greeting.isExecuting). \
            A later start() must launch nothing. \(trace.lifecycle(missing: "…"))
            \(lesson.see("Your own start(), never the inherited one"))
            """)
    }

    // Look at the top of AsyncOperation.start(): is "not started yet" checked and the start
    // claimed in one critical section, or can a second start() slip in between the two?
    // Read "Your own start(), never the inherited one".
    // Covers: C18
    // Paths: reuse
    @Test(
        "two start() calls at the same moment, the second just after the first checked, launch the work once",
        .preflightStartingAgain)
    func twoStartsAtOnceLaunchOnce() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace, pause: Pause(open: true))
        // The second start() runs when the first one reads isCancelled or a flag that says "not
        // started yet": between its check and its claim, if they are two steps.
        let see = lesson.see("Your own start(), never the inherited one")
        guard await callTwiceAtOnce(greeting, "start()", hint: see, { greeting.start() }) else { return }
        guard await waitForFinished(greeting) else { return }
        guard await waitForWorkQueue(of: greeting) else { return }

        let launches = trace.all.filter { $0 == .workPaused }.count
        let executing = greeting.announced(.isExecuting).filter { $0 }
        #expect(
            launches == 1 && executing.count == 1,
            """
            Two threads called start() on a new greeting at the same moment, the second just after the \
            first had checked that it had not started. The work began \(launches) times and isExecuting \
            was announced true \(executing.count) times; expected once each. Both calls saw "not \
            started" before either claimed the start: check and claim in one critical section, and \
            read isCancelled inside it or after the claim. \(trace.lifecycle(missing: "…"))
            \(see)
            """)
    }

    /// Calls `start()` on a thread of its own and waits, bounded, for it to return.
    private func startAgain(
        _ greeting: TracedGreeting, _ when: String, isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Bool {
        await callOnItsOwnThread(
            "start(), called again \(when),",
            hint: "A later start() must return at once. " + greeting.trace.lifecycle(missing: "…") + "\n"
                + lesson.see("Your own start(), never the inherited one"),
            sourceLocation: sourceLocation
        ) { greeting.start() } != nil
    }
}
