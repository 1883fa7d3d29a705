import Chapter3
import Foundation
import KataTestSupport
import Synchronization
import Testing

/// How a greeting cancelled before it started gets started anyway.
enum StartedBy: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A queue starts it, although the operation it depends on has not finished.
    case queueDespiteUnfinishedDependency = "a queue, with its dependency unfinished"
    /// The spec calls `start()` itself.
    case hand = "hand"

    var description: String { rawValue }
}

@Suite("A cancelled operation still finishes, so nothing waits on it forever", .watched)
struct CancelledOperationsFinish {
    // Look at the beginning of start() in AsyncOperation, and at cancel() if you override it.
    // Read "Finish once, on every path".
    // Covers: C21, C25
    @Test(
        "cancelled before start: it finishes without running the work and releases its dependents", .preflight,
        arguments: StartedBy.allCases)
    func cancelledBeforeStart(startedBy: StartedBy) async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace, pause: Pause(open: true))  // if the work wrongly runs, let it end
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()
        greeting.cancel()
        // A queue refuses (traps on) an operation that is already finished, so check before adding it.
        if greeting.isFinished {
            Issue.record(
                """
                cancel() finished a greeting that was never started. Only start() may finish it: a queue \
                refuses to run an operation that is already finished (it stops the program).
                \(lesson.see("Finish once, on every path"))
                """)
            return
        }

        switch startedBy {
        case .queueDespiteUnfinishedDependency:
            // The dependency is never started, so it never finishes.
            greeting.addDependency(BlockOperation { trace.record(.dependencyRan) })
            queue.enqueue([greeting, dependent])
        case .hand:
            queue.addOperation(dependent)
            greeting.start()
            #expect(
                greeting.isFinished,
                """
                A cancelled greeting must be finished when start() returns; it reported isFinished false. \
                \(trace.lifecycle(missing: "…"))
                \(lesson.see("Finish once, on every path"))
                """)
        }

        let settle = Settle()
        await waitUntil(
            "the sentinel that depends on the cancelled greeting to run",
            hint: trace.lifecycle(missing: "sentinel never ran") + "\n"
                + "A cancelled operation counts as finished: start() must finish it and announce isFinished.\n"
                + lesson.see("Finish once, on every path"),
            givingUpWhen: {
                settle.passed(since: trace.contains(.startReturned))
                    ? "start() had returned and nothing else was coming" : nil
            }
        ) { trace.contains(.sentinelRan) }
        #expect(
            !greeting.announced(.isExecuting).contains(true) && greeting.announced(.isFinished) == [true],
            """
            A greeting cancelled before it started goes straight to finished: expected isFinished \
            announced once, true, and isExecuting never announced as true (it never runs). Announced: isExecuting \(greeting.announced(.isExecuting)), \
            isFinished \(greeting.announced(.isFinished)). \(trace.lifecycle(missing: "…"))
            \(lesson.see("Finish once, on every path"))
            """)
        #expect(
            !trace.contains(.workPaused),
            """
            The greeting was cancelled before it started, yet its work ran. \
            \(trace.lifecycle(missing: "…"))
            start() must check isCancelled before launching anything.
            \(lesson.see("Finish once, on every path"))
            """)
        #expect(
            greeting.isFinished && !greeting.isExecuting && greeting.greeting == nil,
            """
            Expected a cancelled greeting to be finished, not executing, with no greeting; it reported \
            isFinished \(greeting.isFinished), isExecuting \(greeting.isExecuting), \
            greeting \(String(describing: greeting.greeting)).
            \(lesson.see("Finish once, on every path"))
            """)
    }

    // Look at the work in GreetingOperation: what it does when the pause ends because of a cancellation,
    // and at cancel() in AsyncOperation if you override it: does it finish through the same guarded
    // step as finish()? Read "Cancelling a running operation".
    // Covers: C22, C24
    // Paths: reuse
    @Test(
        "cancelled while running: it finishes promptly, once, publishes nothing and releases its dependents",
        .preflight)
    func cancelledWhileRunning() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()

        queue.enqueue([greeting, dependent])
        guard await waitForPause(greeting) else { return }
        trace.record(.cancelCalled)
        greeting.cancel()  // the pause ends too, as a cancellable request would

        guard await waitForFinished(greeting) else { return }
        #expect(
            !greeting.isExecuting && greeting.greeting == nil,
            """
            A greeting cancelled while its work was paused must end finished, not executing, with no \
            greeting; it reported isExecuting \(greeting.isExecuting), greeting \
            \(String(describing: greeting.greeting)). \(trace.lifecycle(missing: "…"))
            \(lesson.see("Cancelling a running operation"))
            """)
        guard
            await waitForEffect(
                .sentinelRan, of: greeting, "the sentinel that depends on the cancelled greeting to run",
                why: "Finishing after a cancellation must be announced like any other finish.")
        else { return }

        // The work's own way out comes after the cancel: once its queue has run what was sent to it
        // after the work began, the work has returned, and with it its finish().
        let workEnded = Protected(false)
        greeting.work.queue.async { workEnded.withValue { $0 = true } }
        guard
            await waitUntil(
                "the cancelled greeting's work to return", hint: lesson.see("Cancelling a running operation"),
                { workEnded.value })
        else { return }
        let finished = greeting.announced(.isFinished), executing = greeting.announced(.isExecuting)
        #expect(
            finished == [true] && executing == [true, false],
            """
            A greeting cancelled while its work was paused must be announced finished once, whoever \
            finishes it (cancel() or the work); after the work had returned, it had announced \
            isFinished \(finished) and isExecuting \(executing), expected [true] and [true, false]. \
            A cancel() that finishes the greeting itself must go through the same guarded step as \
            finish(), so that the work's own finish() finds it finished and announces nothing. \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("Finish once, on every path"))
            """)
    }

    // Look at the first thing the work in GreetingOperation does, and where it calls finish().
    // Read "Cancelling a running operation".
    // Covers: C24
    @Test("cancelled after start() but before the work began: it still finishes, without doing the work", .preflight)
    func cancelledBeforeTheWorkBegan() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        // Keep the greeting's work queue busy, so its work waits there after start() returned.
        let queueBusy = Gate("the work queue's earlier job")
        defer { queueBusy.open() }
        greeting.work.queue.async { queueBusy.wait() }
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()

        queue.enqueue([greeting, dependent])
        guard
            await waitUntil(
                "start() to return",
                hint: trace.lifecycle(missing: "start never returned") + "\n" + lesson.see("Steps"),
                { trace.contains(.startReturned) })
        else { return }
        trace.record(.cancelCalled)
        greeting.cancel()
        queueBusy.open()

        guard await waitForFinished(greeting) else { return }
        #expect(
            !trace.contains(.workPaused) && greeting.greeting == nil && !greeting.isExecuting,
            """
            The greeting was cancelled before its work began: the work must notice first thing, before \
            it pauses, skip the greeting and finish. It reported isExecuting \(greeting.isExecuting), greeting \
            \(String(describing: greeting.greeting)). \(trace.lifecycle(missing: "…"))
            \(lesson.see("Cancelling a running operation"))
            """)
        await waitForEffect(
            .sentinelRan, of: greeting, "the sentinel that depends on the cancelled greeting to run",
            why: "Finishing after a cancellation must be announced like any other finish.")
    }

    // Look at finish() in AsyncOperation: what happens when it runs again, or from two threads at once.
    // Read "Finish once, on every path".
    // Covers: C22
    // Paths: reuse
    @Test("finishing again, from two threads at once, changes nothing and announces nothing", .preflightFinishingAgain)
    func finishingAgainChangesNothing() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        let completions = Protected(0)
        greeting.completionBlock = {
            completions.withValue { $0 += 1 }
            trace.record(.completionRan)
        }
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()

        queue.enqueue([greeting, dependent])
        guard await releaseAfterStartReturned(greeting, see: "Steps") else { return }
        guard await waitForFinished(greeting) else { return }
        guard
            await waitForEffect(
                .completionRan, of: greeting, "the completion block to run after the first finish",
                why: "The completion block waits for the isFinished announcement.")
        else { return }
        let announcedBefore = greeting.announcements.count

        // Finish again, twice at once: a late second path out of the work, or a cancel racing the work.
        let returned = Protected(0)
        for _ in 0..<2 {
            Thread.detachNewThread {
                greeting.finish()
                returned.withValue { $0 += 1 }
            }
        }
        guard
            await waitUntil(
                "both extra finish() calls to return", hint: lesson.see("One critical section for all the state"),
                { returned.value == 2 })
        else { return }
        await MainQueue.drain()  // lets a second completion block, if any was scheduled, show up

        let extra = greeting.announcements.all.dropFirst(announcedBefore)
        #expect(
            extra.isEmpty,
            """
            Finishing an operation that was already finished announced \(extra.map(\.description)). A \
            change happens once, so it is announced once: announce only the values that really change.
            \(lesson.see("Finish once, on every path"))
            """)
        #expect(
            completions.value == 1 && greeting.isFinished && !greeting.isExecuting
                && greeting.greeting == "Hello, Ada! Goodbye, Ada!",
            """
            After finishing again, the completion block had run \(completions.value) times and the greeting \
            reported isFinished \(greeting.isFinished), isExecuting \(greeting.isExecuting), greeting \
            \(String(describing: greeting.greeting)); expected once, true, false and the full greeting.
            \(lesson.see("Finish once, on every path"))
            """)
    }

    // Look at finish() in AsyncOperation: is "is it still running?" checked in the same critical
    // section that marks it finished? Read "One critical section for all the state".
    // Covers: C22
    // Paths: reuse
    @Test(
        "two threads finishing a running greeting at the same moment announce it finished once",
        .preflightFinishingAgain)
    func twoFinishesAtOnceAnnounceOnce() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        let completions = Protected(0)
        greeting.completionBlock = {
            completions.withValue { $0 += 1 }
            trace.record(.completionRan)
        }
        let queue = makeQueue()
        queue.enqueue([greeting])
        guard await waitForPause(greeting) else { return }

        // A cancel that finishes at once, racing the work's own finish: the second call comes in
        // just after the first one has checked the state.
        let hint = lesson.see("One critical section for all the state")
        guard await callTwiceAtOnce(greeting, "finish()", hint: hint, { greeting.finish() }) else { return }
        greeting.pause.open()  // the work's own finish() comes third
        _ = await comesTrue(within: Bound.scaled(.milliseconds(100))) { trace.contains(.workResumed) }
        await MainQueue.drain()
        _ = await comesTrue(within: Bound.scaled(.milliseconds(50))) { completions.value > 1 }

        let finished = greeting.announced(.isFinished)
        #expect(
            finished == [true] && completions.value == 1,
            """
            Two threads called finish() on the running greeting at the same moment, the second just \
            after the first had checked the state; isFinished was announced \(finished) and the \
            completion block ran \(completions.value) time(s). Expected one announcement of true and \
            one run. Both calls saw "still running" before either marked it finished: the check and \
            the change must be one step, under one lock.
            \(hint)
            """)
        #expect(
            greeting.isFinished && !greeting.isExecuting,
            """
            After both finish() calls, the greeting reported isFinished \(greeting.isFinished) and \
            isExecuting \(greeting.isExecuting); expected true and false.
            \(hint)
            """)
    }
}
