import Chapter3
import Foundation
import KataTestSupport
import Synchronization
import Testing

/// What one reader on another thread read, in this order: isExecuting, isFinished, isExecuting.
struct Reading: Sendable, CustomStringConvertible {
    let executing: Bool
    let finished: Bool
    let executingAgain: Bool

    /// Reads the three values from `operation`.
    init(of operation: Operation) {
        executing = operation.isExecuting
        finished = operation.isFinished
        executingAgain = operation.isExecuting
    }

    /// What is impossible once the operation has started, if both flags change together; nil if nothing.
    ///
    /// Read in this order, a reader can see the change only before or after it: not executing means
    /// finished already, and finished means no longer executing.
    var contradiction: String? {
        if !executing && !finished { return "neither executing nor finished, after it had started" }
        if finished && executingAgain { return "finished and still executing" }
        return nil
    }

    var description: String {
        "isExecuting \(executing), isFinished \(finished), isExecuting \(executingAgain)"
    }
}

/// What reader threads saw while hammering an operation's state.
struct Sightings: Sendable {
    var readers = 0
    var reads = 0
    var contradictions: Set<String> = []
    var finishedReaders = 0
}

@Suite("The state is one critical section, safe to read from any thread", .watched)
struct StateIsOneCriticalSection {
    // Look at how finish() in AsyncOperation changes the two flags, and how the getters read them.
    // Read "One critical section for all the state".
    // Covers: C19, C22
    @Test("many threads reading the state while it finishes never see a half-made change", .preflight)
    func readersSeeNoContradiction() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()
        let sightings = Protected(Sightings())
        let stop = Protected(false)
        defer { stop.withValue { $0 = true } }
        let readerCount = 3

        queue.enqueue([greeting, dependent])
        guard await waitForPause(greeting) else { return }

        for _ in 0..<readerCount {
            Thread.detachNewThread {
                sightings.withValue { $0.readers += 1 }
                var reads = 0
                var sawFinished = false
                var seen: Set<String> = []
                while !stop.value {
                    let reading = Reading(of: greeting)
                    let published = greeting.greeting != nil
                    reads += 1
                    if let contradiction = reading.contradiction { seen.insert(contradiction) }
                    if reading.finished && !published { seen.insert("finished before the greeting was stored") }
                    if sawFinished && !reading.finished { seen.insert("finished, then not finished again") }
                    if reading.finished {
                        if sawFinished { break }  // one more read after finishing, then stop
                        sawFinished = true
                    }
                }
                sightings.withValue {
                    $0.reads += reads
                    $0.contradictions.formUnion(seen)
                    $0.finishedReaders += sawFinished ? 1 : 0
                }
            }
        }
        await waitUntil("\(readerCount) reader threads to start reading") {
            sightings.value.readers == readerCount
        }

        trace.record(.gateOpened)
        greeting.pause.open()
        guard await waitForFinished(greeting) else { return }
        await waitForEffect(
            .sentinelRan, of: greeting,
            "the sentinel that depends on the greeting to run while readers hammer the state",
            why: "Nobody heard that the greeting finished: announce isFinished after setting the flag.")
        await waitUntil("every reader to see the greeting finished") {
            sightings.value.finishedReaders == readerCount
        }

        let seen = sightings.value
        #expect(
            seen.contradictions.isEmpty,
            """
            Over \(seen.reads) reads, readers saw: \(seen.contradictions.sorted().joined(separator: "; ")). \
            Change both flags together, inside the critical section the getters use.
            \(lesson.see("One critical section for all the state"))
            """)
    }

    // Look at finish() in AsyncOperation: what a reader on another thread can see while it announces.
    // Read "One critical section for all the state".
    // Covers: C22, C23
    @Test("a reader on another thread, while a change is being announced, sees it whole or not at all", .preflight)
    func noReaderSeesAHalfMadeChange() async {
        let trace = Recorder<Moment>()
        let readings = Protected<[Reading]>([])
        let target = Protected<Operation?>(nil)
        defer { target.withValue { $0 = nil } }
        let paused = Protected<Set<String>>([])
        let announcerSaw = Protected<[String]>([])
        // At the first announcement of each finishing change, hold the announcing thread while a reader reads.
        let greeting = TracedGreeting(trace: trace) { announcement in
            // What an observer that reads the other flag finds, on the announcing thread itself.
            if !announcement.isWill, let operation = target.value {
                let own = Reading(of: operation)
                if let contradiction = own.contradiction {
                    announcerSaw.withValue { $0.append("\(contradiction) at \(announcement) (\(own))") }
                }
            }
            guard !announcement.isWill, let operation = target.value,
                announcement.key == .isFinished || !announcement.value,
                paused.withValue({ $0.insert(announcement.key.rawValue).inserted })
            else { return }
            let began = DispatchSemaphore(value: 0), returned = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                began.signal()
                let reading = Reading(of: operation)
                readings.withValue { $0.append(reading) }
                trace.record(
                    .readerReturned(
                        executing: reading.executing, finished: reading.finished, executingAgain: reading.executingAgain
                    ))
                returned.signal()
            }
            // The announcement goes on only once the reader is under way: on a busy machine a new
            // thread can take longer to start than any fixed pause. A reader that then waits for
            // the state's lock cannot return yet; that is fine too.
            _ = began.wait(timeout: .now() + Bound.standard.timeInterval)
            _ = returned.wait(timeout: .now() + Bound.scaled(.milliseconds(300)).timeInterval)
        }
        defer { greeting.pause.open() }
        target.withValue { $0 = greeting }
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()

        queue.enqueue([greeting, dependent])
        guard await releaseAfterStartReturned(greeting, see: "Steps") else { return }
        guard await waitForFinished(greeting) else { return }
        guard
            await waitForEffect(
                .sentinelRan, of: greeting, "the sentinel that depends on the greeting to run",
                why: "Nobody heard that the greeting finished: announce isFinished after setting the flag.")
        else { return }
        await waitUntil("every reader started during an announcement to return") {
            readings.value.count == paused.value.count
        }

        let contradictions = readings.value.compactMap { reading in reading.contradiction.map { "\($0) (\(reading))" } }
        #expect(
            contradictions.isEmpty,
            """
            While finish() was announcing, a reader on another thread read \(contradictions.joined(separator: "; ")). \
            Change both flags, in one critical section, before announcing either of them.
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("One critical section for all the state"))
            """)
        #expect(
            announcerSaw.value.isEmpty,
            """
            While finish() was announcing, the announcing thread itself, where every observer runs, read \
            \(announcerSaw.value.joined(separator: "; ")). Holding the lock is not enough: set both flags \
            first, then announce either of them, so that an observer that reads the other flag finds \
            the change whole. \(trace.lifecycle(missing: "…"))
            \(lesson.see("One critical section for all the state"))
            """)
    }
}
