import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("Finishing is announced, so everything that waits on the operation moves on", .watched)
struct FinishingIsAnnounced {
    // Look at the order of things in AsyncOperation.start(): when the flag changes, and when the
    // work is launched. Work can end before start() returns. Read "Announce every change, after
    // the flag flips".
    // Covers: C19
    @Test("work that ends before start() returns is still announced as executing, then finished", .preflight)
    func quickWorkIsAnnouncedAsExecuting() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace, pause: Pause(open: true), waitsForQuickWork: true)
        defer { greeting.pause.open() }
        greeting.start()
        guard await waitForFinished(greeting) else { return }
        let executing = greeting.announced(.isExecuting), finished = greeting.announced(.isFinished)
        #expect(
            executing == [true, false] && finished == [true],
            """
            The greeting's work ended before start() returned. Expected isExecuting announced true, \
            then false, and isFinished true once; announced: isExecuting \(executing), isFinished \
            \(finished). Mark the operation executing before launching its work, since the work may \
            finish at once. \(trace.lifecycle(missing: "…"))
            \(lesson.see("Announce every change, after the flag flips"))
            """)
    }

    // Look at where AsyncOperation sets its flags and calls didChangeValue(forKey:), in start() and finish(),
    // and at when the work in GreetingOperation stores the greeting.
    // Read "Announce every change, after the flag flips".
    // Covers: C19, C20
    @Test("each change of isExecuting and isFinished is announced with its new value, and a dependent runs", .preflight)
    func everyChangeIsAnnounced() async {
        let trace = Recorder<Moment>()
        let target = Protected<GreetingOperation?>(nil)
        defer { target.withValue { $0 = nil } }
        let storedAtAnnouncement = Protected<[Bool]>([])
        // What a dependent would find when isFinished is announced: the greeting must be there already.
        let greeting = TracedGreeting(trace: trace) { announcement in
            guard announcement.key == .isFinished, !announcement.isWill, let greeting = target.value else { return }
            let stored = greeting.greeting != nil
            storedAtAnnouncement.withValue { $0.append(stored) }
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
        await waitUntil(
            "the queue to drain (operationCount 0)", hint: lesson.see("Announce every change, after the flag flips")
        ) {
            queue.operationCount == 0
        }

        // What an announcement reads back is what everyone who listens learns.
        let executing = greeting.announced(.isExecuting), finished = greeting.announced(.isFinished)
        #expect(
            executing == [true, false] && finished == [true],
            """
            Expected isExecuting to be announced twice (true when the work starts, false when it ends) \
            and isFinished once (true), each after the flag changed. Announced: isExecuting \(executing), \
            isFinished \(finished). \(trace.lifecycle(missing: "…"))
            \(lesson.see("Announce every change, after the flag flips"))
            """)
        #expect(
            !storedAtAnnouncement.value.contains(false),
            """
            At an isFinished announcement the greeting was not stored yet (isFinished announced \
            \(finished)). When that announcement reads true, a dependent or the completion block may \
            run at once and find no greeting; one that reads false tells observers nothing. Store the \
            result first, then finish. \(trace.lifecycle(missing: "…"))
            \(lesson.see("Steps"))
            """)
        #if canImport(Darwin)
            // Darwin shows the "will" half too: each did must follow its own will.
            let halves = greeting.announcements.all.map { "\($0.isWill ? "will" : "did") \($0.key.rawValue)" }
            for key in ["isExecuting", "isFinished"] {
                let mine = halves.filter { $0.hasSuffix(key) }
                #expect(
                    mine == Array(repeating: ["will \(key)", "did \(key)"], count: mine.count / 2).flatMap { $0 },
                    """
                    Every didChangeValue(forKey: "\(key)") needs a willChangeValue(forKey: "\(key)") before \
                    the flag changes, under exactly that key. Observed: \(halves).
                    \(lesson.see("Announce every change, after the flag flips"))
                    """)
            }
        #endif
    }

    // Look at finish() in AsyncOperation: the queue runs the completion block only once it hears isFinished.
    // Covers: C20
    // Paths: collaborators
    @Test("the completion block runs once the work ends", .preflight)
    func completionBlockRuns() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        greeting.completionBlock = { trace.record(.completionRan) }
        let queue = makeQueue()

        queue.addOperation(greeting)
        guard await releaseAfterStartReturned(greeting, see: "Steps") else { return }
        guard await waitForFinished(greeting) else { return }
        await waitForEffect(
            .completionRan, of: greeting, "the greeting's completion block to run",
            why: "The completion block waits for the isFinished announcement.")
    }

    // Look at finish() in AsyncOperation: a queue of width one gives its only slot back when it hears isFinished.
    // Covers: C20
    @Test("a queue that runs one operation at a time moves on to the next one once the work ends", .preflight)
    func oneAtATimeQueueMovesOn() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        let next = sentinel(trace, records: .nextRan)
        let queue = makeQueue(width: 1)

        queue.enqueue([greeting, next])
        guard await releaseAfterStartReturned(greeting, see: "Steps") else { return }
        guard await waitForFinished(greeting) else { return }
        guard
            await waitForEffect(
                .nextRan, of: greeting, "the next operation on the one-at-a-time queue to run",
                why: "The greeting still holds the queue's only slot.")
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
