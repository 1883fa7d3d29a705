import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("Finishing is announced, so everything that waits on the operation moves on")
struct FinishingIsAnnounced {
    // A dependent runs only when isFinished is announced AFTER the flag flipped to true.
    // Flip both flags first, then call didChangeValue(forKey:) for "isExecuting" and "isFinished".
    // Covers: C20
    @Test("an operation that depends on the greeting runs, and the queue drains, once the work ends")
    func dependentRunsAndQueueDrains() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let greeting = TracedGreeting(trace: trace, gate: gate)
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()
        #if canImport(Darwin)
            let announcements = Announcements(of: greeting)
            defer { announcements.stop() }
        #endif

        queue.enqueue([greeting, dependent])
        guard await releaseAfterStartReturned(trace, gate, see: "The steps") else { return }
        await waitForFinished(greeting, trace)
        await waitUntil(
            "the sentinel that depends on the greeting to run",
            hint: trace.lifecycle(missing: "sentinel never ran") + "\n"
                + "Nobody heard that the greeting finished: announce isFinished after setting the flag.\n"
                + lesson.see("Announce every change, after the flag flips")
        ) { trace.contains(.sentinelRan) }
        await waitUntil(
            "the queue to drain (operationCount 0)",
            hint: trace.lifecycle(missing: "queue still holds \(queue.operationCount) operation(s)") + "\n"
                + lesson.see("Announce every change, after the flag flips")
        ) { queue.operationCount == 0 }

        #if canImport(Darwin)
            #expect(
                announcements.log.all.contains("did isFinished true")
                    && announcements.log.all.contains("did isExecuting false"),
                """
                Expected will/did notifications for isExecuting and isFinished, with the new values \
                already in place at "did"; observed: \(announcements.log.timeline).
                \(lesson.see("Announce every change, after the flag flips"))
                """)
        #endif
    }

    // The queue runs the completion block only after it hears that isFinished turned true.
    // Covers: C20
    @Test("the completion block runs once the work ends")
    func completionBlockRuns() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let greeting = TracedGreeting(trace: trace, gate: gate)
        greeting.completionBlock = { trace.record(.completionRan) }
        let queue = makeQueue()

        queue.addOperation(greeting)
        guard await releaseAfterStartReturned(trace, gate, see: "The steps") else { return }
        await waitForFinished(greeting, trace)
        await waitUntil(
            "the greeting's completion block to run",
            hint: trace.lifecycle(missing: "completion block never ran") + "\n"
                + "The completion block waits for the isFinished announcement.\n"
                + lesson.see("Announce every change, after the flag flips")
        ) { trace.contains(.completionRan) }
    }

    // On a one-at-a-time queue, an operation that never announces it finished holds the only slot forever.
    // Covers: C20
    @Test("a queue that runs one operation at a time moves on to the next one once the work ends")
    func oneAtATimeQueueMovesOn() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let greeting = TracedGreeting(trace: trace, gate: gate)
        let next = sentinel(trace, records: .nextRan)
        let queue = makeQueue(width: 1)

        queue.enqueue([greeting, next])
        guard await releaseAfterStartReturned(trace, gate, see: "The steps") else { return }
        await waitForFinished(greeting, trace)
        guard
            await waitUntil(
                "the next operation on the one-at-a-time queue to run",
                hint: trace.lifecycle(missing: "next operation never ran") + "\n"
                    + "The greeting still holds the queue's only slot.\n"
                    + lesson.see("Announce every change, after the flag flips"), { trace.contains(.nextRan) })
        else { return }
        #expect(
            trace.recorded(.gateOpened, before: .nextRan),
            """
            The next operation ran while the greeting's work was still paused: the slot was given up \
            too early. \(trace.lifecycle(missing: "…"))
            \(lesson.see("Announce every change, after the flag flips"))
            """)
    }
}
