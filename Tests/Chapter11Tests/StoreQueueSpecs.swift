import Chapter11
import Foundation
import KataTestSupport
import Testing

/// Opening the store after uploads were asked for; runs in a child process.
///
/// Changing the underlying queue of a queue that holds operations stops the program, so the
/// scenario runs where that costs only this spec. The child waits a bounded time for what
/// correct code does, then exits with a failure and says what it saw.
enum OpeningScenario {
    static func openLater() {
        exitIfStillRunning(after: patience * 4, status: EXIT_FAILURE)
        let queue = EngineQueue()
        let engine = SyncEngine(queue: queue)
        engine.upload(notes("groceries", "ideas"))
        // An urgent note too: uploadNow(_:) is no exception, its job waits aside like the others.
        engine.uploadNow(Note("urgent"))
        let finishedInOpen = Protected(false)
        // The store is handed over as an app hands over one it made for the engine: once
        // open(_:) returns, only the engine keeps it, and the scenario keeps its record of saves.
        let saves: Recorder<Desk.Save>
        let store: WeakReference<Desk>
        do {
            let handedOver = Desk()
            saves = handedOver.saves
            store = WeakReference(handedOver)
            guard !settles(within: Bound.scaled(.milliseconds(50)), { saves.count > 0 }) else {
                LastWords.fail("openLater", "The store saved \(saves.timeline) before it was even open.")
            }
            queue.afterNextAdding { operations in
                // The window: the jobs that waited are in the queue, and the free store runs them
                // before open(_:) goes on to its next line.
                finishedInOpen.withValue { $0 = settles(within: patience) { operations.allSatisfy(\.isFinished) } }
            }
            engine.open(handedOver)
        }
        /// Why the urgent note asked for before open(_:) is missing, when it is.
        func urgentMissing() -> String {
            saves.all.contains { $0.title == "urgent" }
                ? ""
                : """
                 The urgent note asked for before open(_:) was never saved: its job reached the \
                queue before the store existed, ran on a borrowed thread and found no store. Keep \
                every job asked for before open(_:) aside, uploadNow(_:)'s too: the queue must also \
                stay empty until open(_:) sets its underlying queue.
                """
        }
        /// Why the store saw nothing, when it is gone.
        func freed() -> String {
            store.value != nil
                ? ""
                : """
                 The store was freed once open(_:) returned: the engine keeps it weakly, or not at \
                all. The caller handed it over; keep it (a strong reference) as long as the engine \
                saves into it.
                """
        }
        let onlyUrgentMissing = Set(saves.all.map(\.title)) == ["groceries", "ideas"]
        if finishedInOpen.value, saves.count < 3, !onlyUrgentMissing {
            LastWords.fail(
                "openLater",
                """
                The jobs that waited for open(_:) ended before it returned, and the store saw only \
                \(saves.timeline): they ran before the engine kept the store. Keep the store \
                before the jobs reach the queue.
                """)
        }
        guard settles(within: patience, { saves.count >= 3 }) else {
            LastWords.fail(
                "openLater",
                """
                After open(), the notes asked for before it were not saved within \(patience.seconds) s; \
                the store saw \(saves.timeline).\(freed())\(urgentMissing())
                """)
        }
        let later = engine.upload(notes("recipes"))
        guard settles(within: patience, { saves.count >= 4 || later.allSatisfy(\.isFinished) }), saves.count >= 4
        else {
            LastWords.fail(
                "openLater",
                """
                A note asked for after open() was never saved\(later.allSatisfy(\.isFinished) ? ", though its job ended" : ""); \
                the store saw \(saves.timeline).\(freed())
                """)
        }
        let misplaced = saves.all.filter { !$0.onTheStoreQueue || !$0.insideAnOperation }
        let titles = saves.all.map(\.title)
        guard misplaced.isEmpty, titles.filter({ $0 != "urgent" }) == ["groceries", "ideas", "recipes"],
            titles.firstIndex(of: "urgent").map({ $0 < 3 }) == true
        else {
            LastWords.fail(
                "openLater",
                """
                Expected groceries and ideas in that order, the urgent note among the first three, \
                and recipes last, each saved by its job on the store's queue; the store saw \
                \(saves.timeline).
                """)
        }
    }
}

@Suite("Jobs run on the store's own dispatch queue", .watched)
struct StoreQueueSpecs {
    // Look at SyncEngine.open(_:), at where the jobs asked for before it wait, and at how the
    // engine keeps the store it was handed. What does Foundation require of a queue whose
    // underlyingQueue you set? See "Running on a queue you own".
    // Covers: C75
    // Paths: collaborators
    @Test(
        "notes asked for before the store is open, and after, are saved on its queue once it opens, into a store only the engine keeps"
    )
    func uploadsAskedBeforeOpenRunOnTheStore() async {
        LastWords.forget("openLater")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected open(_:) to start saving the notes asked for before it, and those asked for \
            after it, each as a job on the store's dispatch queue, and the program to go on. Setting underlyingQueue on a queue \
            that already holds operations is a programmer error that stops the program.
            \(lesson.see("Running on a queue you own"))
            """
        ) {
            OpeningScenario.openLater()
        }
        LastWords.explain("openLater", outcome)
    }

    // The store is busy. Look at how SyncEngine hands its jobs to the store's queue, at the
    // width of its queue and at uploadNow(_:), and, if only the default queue fails, at what
    // init(queue:onSaved:) makes when it is given none. See "Running on a queue you own" and "A
    // serial queue underneath is not a width of one".
    // Covers: C75, C76, C77
    // Paths: values, collaborators
    @Test(
        "while the store is busy, waiting jobs hold no thread, and an urgent note goes ahead of them",
        arguments: QueueOrigin.allCases)
    func urgentUploadGoesAheadOfWaitingOnes(queue: QueueOrigin) async {
        switch queue {
        case .given:
            await Self.urgentGoesAhead(SyncEngine(queue: queueOfItsOwn()))
        case .byDefault:
            // In a process of its own: a default queue that every engine shares would let the
            // engines of the specs beside this one stop the whole run.
            let outcome = await #expect(
                processExitsWith: .success,
                """
                The child process whose engine was made with the default queue stopped before it \
                could judge. \(lesson.see("Running on a queue you own"))
                """
            ) {
                await StoreQueueSpecs.urgentGoesAheadOnTheDefaultQueue()
            }
            LastWords.explain(outcome)
        }
    }

    /// The scenario with an engine made without a queue; runs in an exit test.
    static func urgentGoesAheadOnTheDefaultQueue() async {
        exitIfStillRunning(after: Bound.standard * 3, status: EXIT_FAILURE)
        await urgentGoesAhead(SyncEngine())
    }

    /// Asks `engine` for four notes and an urgent one while its store is busy, then lets the store go.
    static func urgentGoesAhead(_ engine: SyncEngine) async {
        let store = Desk()
        engine.open(store)
        store.hold()
        defer { store.release() }
        let background = engine.upload(notes("a", "b", "c", "d"))
        let urgent = engine.uploadNow(Note("urgent"))
        let jobs = background + [urgent]
        let running = await comesTrue(within: Bound.scaled(.milliseconds(100))) {
            jobs.contains { $0.isExecuting }
        }
        #expect(
            !running,
            """
            While the store was busy, upload jobs were already executing: \
            \(jobs.filter(\.isExecuting).map(\.note.title)). Each of them holds a thread while it \
            waits for the store. Let the store's queue run the jobs themselves, so that they wait \
            there as queued work.
            \(lesson.see("Running on a queue you own"))
            """)
        store.release()
        guard
            await waitUntil(
                "all five notes to be saved", timeout: patience, hint: lesson.see("Running on a queue you own"),
                givingUpWhen: {
                    jobs.allSatisfy(\.isFinished) && store.saves.count < 5
                        ? "every job finished and the store saw only \(store.saves.timeline)" : nil
                }, { store.saves.count >= 5 })
        else { return }
        #expect(
            store.misplaced.isEmpty,
            """
            Expected every note to be saved by its job, running on the store's queue; the store \
            saw \(store.saves.timeline).
            \(lesson.see("Running on a queue you own"))
            """)
        let position = store.saved.firstIndex(of: "urgent") ?? 5
        #expect(
            position <= 1,
            """
            The urgent note was saved in position \(position + 1): \(store.saves.timeline). Only the \
            first background note may go before it, the one already handed to the store. A wide \
            operation queue hands every job to the serial store queue at once, in arrival order, \
            and priorities no longer matter there.
            \(lesson.see("A serial queue underneath is not a width of one"))
            """)
        #expect(
            urgent.qualityOfService == .userInitiated,
            """
            The urgent job asks for quality of service \(urgent.qualityOfService.rawValue); \
            expected .userInitiated, its own class, set before it was added.
            \(lesson.see("Whose quality of service"))
            """)
        let raised = background.filter { urgency($0.qualityOfService) >= urgency(.userInitiated) }
        #expect(
            raised.isEmpty,
            """
            The background jobs \(raised.map(\.note.title)) ask for quality of service \
            \(raised.map { "\($0.qualityOfService)" }.joined(separator: ", ")), as urgent as the \
            urgent note. Only the urgent job sets .userInitiated; a batch's jobs set no class, so \
            the store's queue decides theirs.
            \(lesson.see("Whose quality of service"))
            """)
    }
}

/// Where the operation queue of a spec's engine comes from.
enum QueueOrigin: String, CaseIterable, Sendable, CustomStringConvertible {
    case given = "a queue passed to init(queue:onSaved:)"
    case byDefault = "the default queue of init(queue:onSaved:)"

    var description: String { rawValue }
}

/// How urgent a class is, from background (0) to user-interactive (4).
///
/// Never compare raw values: they are Darwin's class numbers on Apple platforms, where a larger
/// one is more urgent, but 0 to 4 in declaration order in swift-corelibs-foundation, where
/// user-interactive is 0 (Tests/PLATFORM.md).
func urgency(_ quality: QualityOfService) -> Int {
    switch quality {
    case .background: 0
    case .utility: 1
    case .default: 2
    case .userInitiated: 3
    case .userInteractive: 4
    @unknown default: 2
    }
}

@Suite("Jobs that waited for open(_:) are jobs like the others", .watched)
struct WaitedForOpenSpecs {
    // Four notes were asked for before the store opened, and an urgent one right after it
    // opened, while the store is busy with the first. Look at what open(_:) hands to the queue
    // and at the width the queue has by then, and at where the progress total is raised. See
    // "A serial queue underneath is not a width of one" and "Progress counts finished work".
    // Covers: C76, C78
    @Test(
        "notes asked for before open(_:) count in the progress, and an urgent note asked for later still goes ahead of them"
    )
    func jobsThatWaitedForOpenAreQueuedLikeOthers() async {
        LastWords.forget("waitedForOpen")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected the urgent note, asked for right after open(_:), to be saved before the notes \
            that waited for open(_:) (all but the one the store was already saving), and progress \
            to read 100 % once every note was saved.
            \(lesson.see("A serial queue underneath is not a width of one"))
            """
        ) {
            OpeningScenario.urgentAfterOpen()
        }
        LastWords.explain("waitedForOpen", outcome)
    }
}

extension OpeningScenario {
    /// Asks for four notes before the store opens, opens it busy, then asks for an urgent note.
    static func urgentAfterOpen() {
        exitIfStillRunning(after: patience * 4, status: EXIT_FAILURE)
        let store = Desk()
        let engine = SyncEngine()
        let background = engine.upload(notes("a", "b", "c", "d"))
        store.hold()
        LastWords.note(
            "waitedForOpen",
            """
            open(_:) was called with four jobs waiting for it, and the program stopped: setting \
            underlyingQueue on a queue that already holds operations is a programmer error.
            """)
        engine.open(store)
        let urgent = engine.uploadNow(Note("urgent"))
        let jobs = background + [urgent]
        store.release()
        guard settles(within: patience, { store.saves.count >= 5 && jobs.allSatisfy(\.isFinished) }) else {
            LastWords.fail(
                "waitedForOpen",
                "Not every note was saved within \(patience.seconds) s; the store saw \(store.saves.timeline).")
        }
        let position = store.saved.firstIndex(of: "urgent") ?? 5
        guard position <= 1 else {
            LastWords.fail(
                "waitedForOpen",
                """
                a, b, c and d were asked for before open(_:), the urgent note right after it, and it \
                was saved in position \(position + 1): \(store.saves.timeline). Only the note the \
                store was already saving may go before it. If the queue is wider than one when \
                open(_:) adds the waiting jobs, it hands them all to the serial store queue at once, \
                and priorities no longer matter there.
                """)
        }
        guard settles(within: patience, { engine.progress.fractionCompleted == 1 }) else {
            LastWords.fail(
                "waitedForOpen",
                """
                Every note was saved and progress read \(described(engine.progress)). Notes asked \
                for before open(_:) are uploads like the others: the total counts them when they \
                are asked for.
                """)
        }
    }
}

@Suite("An urgent job is urgent when the queue gets it", .watched, .enginesTried)
struct UrgentWhenAddedSpecs {
    // The store is busy with a; right after the urgent job reaches the queue, a ends and the
    // queue picks the next job. Look at when uploadNow(_:) sets its job's priority and class:
    // before adding it, or after? Linux re-sorts a waiting job whose priority changes; Apple's
    // documentation promises no such thing. See "A serial queue underneath is not a width of one"
    // and "Whose quality of service".
    // Covers: C76, C77
    @Test("the urgent note goes next even when the store frees up the moment its job is added")
    func urgentJobIsUrgentWhenAdded() async {
        let store = Desk()
        let queue = EngineQueue()
        let engine = SyncEngine(queue: queue)
        engine.open(store)
        store.hold()
        defer { store.release() }
        engine.upload(notes("a", "b", "c", "d"))
        let gate = store.pause(atSave: 2)
        defer { gate.open() }
        let classWhenAdded = Protected<[QualityOfService]>([])
        queue.afterNextAdding { operations in
            classWhenAdded.withValue { $0 = operations.map(\.qualityOfService) }
            // The window: the urgent job is in the queue; the store saves a, and the queue hands
            // it the next job, which waits at the gate.
            store.release()
            _ = settles(within: Bound.standard) { store.arrivals.count >= 2 }
        }
        let urgent = engine.uploadNow(Note("urgent"))
        gate.open()
        guard
            await waitUntil(
                "all five notes to be saved", timeout: patience,
                hint: """
                    The store saw \(store.saves.timeline). \
                    \(lesson.see("A serial queue underneath is not a width of one"))
                    """,
                givingUpWhen: {
                    urgent.isFinished && store.saves.count < 5 && !store.saved.contains("urgent")
                        ? "the urgent job finished and the store never saved it: \(store.saves.timeline)" : nil
                }, { store.saves.count >= 5 })
        else { return }
        let position = store.saved.firstIndex(of: "urgent") ?? 5
        #expect(
            position <= 1,
            """
            The store freed up right after the urgent job was added, and saved \
            \(store.saves.timeline): the urgent note came in position \(position + 1), not second. \
            The queue chose the next job by the priority the urgent job had when it was added; \
            give it its priority and class before adding it.
            \(lesson.see("A serial queue underneath is not a width of one"))
            """)
        #expect(
            classWhenAdded.value.map(urgency) == [urgency(.userInitiated)],
            """
            When the queue got the urgent job, its class was \
            \(classWhenAdded.value.map { "\($0)" }.joined(separator: ", ")), not .userInitiated: the \
            class was set after adding it, when the queue may already have handed it to the store. \
            Give it its priority and class before adding it.
            \(lesson.see("Whose quality of service"))
            """)
    }
}
