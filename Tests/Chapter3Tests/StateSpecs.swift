import Chapter3
import Foundation
import KataTestSupport
import Synchronization
import Testing

/// What reader threads saw while hammering an operation's state.
struct Sightings: Sendable {
    var readers = 0
    var reads = 0
    var contradictions: [String] = []
    var finishedReaders = 0
}

@Suite("The state is one critical section, safe to read from any thread")
struct StateIsOneCriticalSection {
    // Readers here ask isFinished, then isExecuting. If finishing sets the two flags one at a time,
    // or a reader can slip in between, someone sees an impossible pair.
    // Covers: C19, C22
    @Test("many threads reading the state while it finishes never see it executing and finished at once")
    func readersSeeNoContradiction() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let greeting = TracedGreeting(trace: trace, gate: gate)
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()
        let sightings = Protected(Sightings())
        let stop = Protected(false)
        let readerCount = 4

        queue.enqueue([greeting, dependent])
        guard await waitForPause(trace) else { return }

        defer { stop.withValue { $0 = true } }
        for _ in 0..<readerCount {
            Thread.detachNewThread {
                sightings.withValue { $0.readers += 1 }
                var reads = 0
                var sawFinished = false
                while !stop.value {
                    let finished = greeting.isFinished
                    let executing = greeting.isExecuting
                    reads += 1
                    if finished && executing {
                        sightings.withValue { $0.contradictions.append("executing and finished at once") }
                    }
                    if sawFinished && !finished {
                        sightings.withValue { $0.contradictions.append("finished, then not finished again") }
                    }
                    if finished {
                        if sawFinished { break }  // one more read after finishing, then stop
                        sawFinished = true
                    }
                }
                sightings.withValue {
                    $0.reads += reads
                    $0.finishedReaders += sawFinished ? 1 : 0
                }
            }
        }
        await waitUntil("\(readerCount) reader threads to start reading") {
            sightings.value.readers == readerCount
        }

        trace.record(.gateOpened)
        gate.open()
        await waitUntil(
            "the sentinel that depends on the greeting to run while readers hammer the state",
            hint: trace.lifecycle(missing: "sentinel never ran") + "\n"
                + lesson.see("Announce every change, after the flag flips")
        ) { trace.contains(.sentinelRan) }
        await waitUntil("every reader to see the greeting finished") {
            sightings.value.finishedReaders == readerCount
        }

        let seen = sightings.value
        #expect(
            seen.contradictions.isEmpty,
            """
            Over \(seen.reads) reads, readers saw: \(Set(seen.contradictions).sorted().joined(separator: "; ")). \
            Set both flags together, inside the same critical section the getters use.
            \(lesson.see("One re-entrant lock for all the state"))
            """)
    }

    // finish() must hold the state's lock while it announces: a reader on another thread then waits
    // until the change is fully announced, instead of reading state that is still being published.
    // Covers: C19, C23
    @Test("a reader on another thread waits while a change is being announced")
    func readerWaitsForTheAnnouncement() async {
        let trace = Recorder<Moment>()
        let gate = Gate("the greeting's pause")
        defer { gate.open() }
        let announcementGate = Gate("the isFinished announcement")
        defer { announcementGate.open() }
        let paused = Protected(false)
        let greeting = TracedGreeting(trace: trace, gate: gate) { finished in
            // The work queue reads isFinished back while announcing it: hold the announcing thread there.
            guard finished,
                paused.withValue({ wasPaused in
                    defer { wasPaused = true }
                    return !wasPaused
                })
            else { return }
            trace.record(.announcing)
            announcementGate.wait()
        }
        #if canImport(Darwin)
            // Darwin reads the value back only for observers that ask for it.
            let announcements = Announcements(of: greeting)
            defer { announcements.stop() }
        #endif

        Thread.detachNewThread { greeting.start() }
        guard await releaseAfterStartReturned(trace, gate, see: "The steps") else { return }
        guard
            await waitUntil(
                "the greeting to announce isFinished with the flag already true",
                hint: trace.lifecycle(missing: "isFinished never announced after the flag flipped") + "\n"
                    + lesson.see("Announce every change, after the flag flips"), { trace.contains(.announcing) })
        else { return }

        Thread.detachNewThread {
            let finished = greeting.isFinished
            let executing = greeting.isExecuting
            trace.record(.readerReturned(executing: executing, finished: finished))
        }
        let readerReturned: @Sendable (Moment) -> Bool = {
            if case .readerReturned = $0 { true } else { false }
        }
        let slippedIn = await comesTrue(within: .milliseconds(500)) { trace.contains(where: readerReturned) }
        #expect(
            !slippedIn,
            """
            Another thread read the state while finish() was still announcing the change: the getters \
            and finish() do not share one lock. \(trace.lifecycle(missing: "…"))
            \(lesson.see("One re-entrant lock for all the state"))
            """)

        trace.record(.announcementReleased)
        announcementGate.open()
        guard
            await waitUntil(
                "the reader to return once the announcement was over",
                {
                    trace.contains(where: readerReturned)
                })
        else { return }
        #expect(
            trace.contains(.readerReturned(executing: false, finished: true)),
            """
            After finishing, a reader should see isExecuting false and isFinished true. \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("One re-entrant lock for all the state"))
            """)
    }
}
