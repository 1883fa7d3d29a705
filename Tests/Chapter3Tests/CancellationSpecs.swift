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

@Suite("A cancelled operation still finishes, so nothing waits on it forever")
struct CancelledOperationsFinish {
    // start() must check isCancelled first: a cancelled greeting finishes at once, runs no work,
    // and still announces isFinished so that its dependents are released.
    // Covers: C21, C24, C25
    @Test(
        "cancelled before start: it finishes without running the work and releases its dependents",
        arguments: StartedBy.allCases)
    func cancelledBeforeStart(startedBy: StartedBy) async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        gate.open()  // if the work wrongly runs, let it end
        let greeting = TracedGreeting(trace: trace, gate: gate)
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()
        greeting.cancel()

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

        await waitUntil(
            "the sentinel that depends on the cancelled greeting to run",
            hint: trace.lifecycle(missing: "sentinel never ran") + "\n"
                + "A cancelled operation counts as finished: start() must finish it and announce isFinished.\n"
                + lesson.see("Finish once, on every path")
        ) { trace.contains(.sentinelRan) }
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

    // cancel() on a running asynchronous operation must finish it right away; the work is told to stop
    // through isCancelled. Here the work stays paused, so only cancel() itself can finish the greeting.
    // Covers: C24
    @Test("cancelled while running: it finishes promptly and releases its dependents")
    func cancelledWhileRunning() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let greeting = TracedGreeting(trace: trace, gate: gate)
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()

        queue.enqueue([greeting, dependent])
        guard await waitForPause(trace) else { return }
        trace.record(.cancelCalled)
        greeting.cancel()

        guard
            await waitUntil(
                "the cancelled greeting to finish while its work is still paused",
                hint: trace.lifecycle(missing: "isFinished never turned true") + "\n"
                    + "cancel() must finish an executing asynchronous operation itself.\n"
                    + lesson.see("Finish once, on every path"), { greeting.isFinished })
        else { return }
        trace.record(.finishedSeen)
        #expect(
            trace.recorded(.finishedSeen, before: .workResumed),
            """
            The greeting finished only after its work went on; cancel() itself must finish a running \
            asynchronous operation. \(trace.lifecycle(missing: "…"))
            \(lesson.see("Finish once, on every path"))
            """)
        #expect(
            !greeting.isExecuting,
            "A cancelled, finished greeting still reports isExecuting true. \(lesson.see("Finish once, on every path"))"
        )
        await waitUntil(
            "the sentinel that depends on the cancelled greeting to run",
            hint: trace.lifecycle(missing: "sentinel never ran") + "\n"
                + "Finishing on cancel must be announced like any other finish.\n"
                + lesson.see("Announce every change, after the flag flips")
        ) { trace.contains(.sentinelRan) }
    }

    // Cancelling a running greeting finishes it; when its paused work later ends, it calls finish() again.
    // That second call must change and announce nothing: check that finish() announces only real changes.
    // Covers: C22, C23
    @Test("finishing a second time announces nothing, and the completion block runs once")
    func finishingTwiceHasNoSecondEffect() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let readBacksOnWorkQueue = Protected(0)
        let completions = Protected(0)
        let greeting = TracedGreeting(trace: trace, gate: gate) { _ in
            readBacksOnWorkQueue.withValue { $0 += 1 }
        }
        greeting.completionBlock = {
            completions.withValue { $0 += 1 }
            trace.record(.completionRan)
        }
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()
        #if canImport(Darwin)
            let announcements = Announcements(of: greeting)
            defer { announcements.stop() }
        #endif

        queue.enqueue([greeting, dependent])
        guard await waitForPause(trace) else { return }
        trace.record(.cancelCalled)
        greeting.cancel()
        guard
            await waitUntil(
                "the cancelled greeting to finish and its completion block to run",
                hint: trace.lifecycle(missing: "it never finished, or the completion block never ran") + "\n"
                    + lesson.see("Finish once, on every path"),
                { greeting.isFinished && trace.contains(.completionRan) && trace.contains(.sentinelRan) })
        else { return }
        trace.record(.finishedSeen)
        readBacksOnWorkQueue.withValue { $0 = 0 }

        // Let the paused work end: it finishes a second time, on the work queue.
        trace.record(.gateOpened)
        gate.open()
        greeting.work.queue.async { trace.record(.workQueueDrained) }
        guard
            await waitUntil(
                "the greeting's work to end after the gate opened",
                hint: trace.lifecycle(missing: "work never ended") + "\n" + lesson.see("Finish once, on every path"),
                { trace.contains(.workQueueDrained) })
        else { return }

        #if canImport(Darwin)
            #expect(
                announcements.didChanges(of: "isFinished") == 1,
                """
                isFinished was announced \(announcements.didChanges(of: "isFinished")) times; a change \
                happens once, so it is announced once. Observed: \(announcements.log.timeline).
                \(lesson.see("Finish once, on every path"))
                """)
        #else
            // On Linux, announcing isFinished reads the property back on the announcing thread.
            #expect(
                readBacksOnWorkQueue.value == 0,
                """
                The work's own finish() announced isFinished again, although the greeting had already \
                finished when it was cancelled. Announce only the values that really change. \
                \(trace.lifecycle(missing: "…"))
                \(lesson.see("Finish once, on every path"))
                """)
        #endif
        #expect(
            completions.value == 1,
            "The completion block ran \(completions.value) times; expected once. \(lesson.see("Finish once, on every path"))"
        )
        #expect(
            greeting.isFinished && !greeting.isExecuting && greeting.greeting == nil,
            """
            After the second finish() the greeting reported isFinished \(greeting.isFinished), \
            isExecuting \(greeting.isExecuting), greeting \(String(describing: greeting.greeting)); \
            expected true, false and no greeting, because it was cancelled.
            \(lesson.see("Finish once, on every path"))
            """)
    }
}
