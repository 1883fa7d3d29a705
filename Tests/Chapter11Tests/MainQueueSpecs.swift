import Chapter11
import Foundation
import KataTestSupport
import Testing

/// An operation for the main queue that records whether it ran, for messages about what else the engine touched.
private final class Bystander: Sendable {
    let operation: BlockOperation
    private let ran = Protected(false)

    init() {
        let ran = ran
        operation = BlockOperation { ran.withValue { $0 = true } }
    }

    var hasRun: Bool { ran.value }
}

@Suite("The main queue belongs to the whole app", .watched, .enginesTried)
struct MainQueueSpecs {
    // stop() is called on the main queue while the engine's updates wait there. Look at how
    // SyncEngine.stop() drops them, and at what else that touches. See "The main queue is
    // everybody's".
    // Covers: C80
    // Paths: interference
    @Test("stop() drops the engine's waiting updates and leaves other main-queue work alone")
    func stopDropsOnlyTheEnginesUpdates() async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(queue: queueOfItsOwn(), onSaved: screen.onSaved)
        engine.open(store)
        let bystander = Bystander()
        let saved = Protected(false)
        // One main-queue operation: the notes are saved meanwhile, so the engine's updates queue
        // up behind it; then other work is queued, and the engine stopped.
        await onTheMainQueue("the operation that stops the engine") {
            let jobs = engine.upload(notes("a", "b"), then: screen.done())
            saved.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            OperationQueue.main.addOperation(bystander.operation)
            engine.stop()
        }
        guard saved.value else {
            Issue.record("The notes a and b were never saved; the store saw \(store.saves.timeline).")
            return
        }
        await waitUntil(
            "an operation queued on the main queue by other code to run after stop()",
            hint: """
                It was cancelled: stop() cancelled every operation of the main queue, the app's and \
                the screen's included, not only the engine's. \(lesson.see("The main queue is everybody's"))
                """,
            givingUpWhen: { bystander.operation.isCancelled ? "it was cancelled" : nil }
        ) { bystander.hasRun }
        await onTheMainQueue("an operation queued after them") {}
        #expect(
            screen.updates.count == 0,
            """
            After stop() returned, the screen still received \(screen.updates.timeline). Updates \
            that were already waiting on the main queue must be dropped; on Linux \
            OperationQueue.main ignores cancelAllOperations().
            \(lesson.see("The main queue is everybody's"))
            """)
    }

    // pauseUpdates() and resumeUpdates() are called on the main queue. Look at what they
    // suspend. See "The main queue is everybody's".
    // Covers: C80
    // Paths: interference
    @Test("pausing holds the engine's updates, even those already sent, while other main-queue work goes on")
    func pauseHoldsOnlyTheEnginesUpdates() async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(queue: queueOfItsOwn(), onSaved: screen.onSaved)
        engine.open(store)
        let saved = Protected(false)
        await onTheMainQueue("the operation that pauses updates") {
            let jobs = engine.upload(notes("a", "b"), then: screen.done())
            saved.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            engine.pauseUpdates()
        }
        // Whatever happens, the main queue must run again for the specs that follow.
        defer { engine.resumeUpdates() }
        guard saved.value else {
            Issue.record("The notes a and b were never saved; the store saw \(store.saves.timeline).")
            return
        }
        let bystander = Bystander()
        OperationQueue.main.addOperation(bystander.operation)
        guard
            await waitUntil(
                "another main-queue operation to run while the engine's updates are paused",
                hint: """
                    pauseUpdates() stopped the whole main queue, and with it the app's screen. \
                    \(lesson.see("The main queue is everybody's"))
                    """, { bystander.hasRun })
        else { return }
        await onTheMainQueue("an operation queued after them") {}
        #expect(
            screen.updates.count == 0,
            """
            While updates were paused, the screen received \(screen.updates.timeline). On Linux \
            OperationQueue.main ignores isSuspended, and an update sent before the pause waits on \
            the main queue: decide when it runs.
            \(lesson.see("The main queue is everybody's"))
            """)
        await onTheMainQueue("resumeUpdates()") { engine.resumeUpdates() }
        await waitUntil(
            "a, b and done to reach the screen after resumeUpdates()",
            hint: "The screen received \(screen.updates.timeline). \(lesson.see("The main queue is everybody's"))"
        ) { screen.updates.count >= 3 }
        let updates = screen.updates.all
        #expect(
            updates.filter { $0 != "done" } == ["a", "b"] && updates.contains("done"),
            """
            After resumeUpdates(), the screen received \(screen.updates.timeline); expected a and \
            b, in that order, and done, all on the main queue.
            \(lesson.see("The main queue is everybody's"))
            """)
    }
}

/// What one of two engines does while the other delivers.
enum OtherEngine: String, CaseIterable, Sendable, CustomStringConvertible {
    case paused = "the other engine paused"
    case stopped = "the other engine stopped"
    case pausedBesideAResume = "the other engine paused, this one paused and resumed"

    var description: String { rawValue }
}

@Suite("Each engine owns its own updates", .watched)
struct TwoEnginesSpecs {
    // Two engines, two screens: one engine is paused or stopped, the other is not. Look at where
    // SyncEngine keeps "paused", "stopped" and the held updates: in each engine, or somewhere
    // every engine shares (a static, a global, a shared queue)? See "The main queue is
    // everybody's".
    // Covers: C80
    // Paths: interference
    @Test("pausing or stopping one engine leaves another engine's updates alone", arguments: OtherEngine.allCases)
    func oneEngineLeavesAnotherAlone(other: OtherEngine) async {
        // In a process of its own: flags every engine shares would otherwise be set and reset by
        // the specs running beside it, and decide its verdict.
        let explanation = """
            The child process that paused or stopped one of two engines stopped before it could \
            judge. \(lesson.see("The main queue is everybody's"))
            """
        let outcome =
            switch other {
            case .paused:
                await #expect(processExitsWith: .success, Comment(rawValue: explanation)) {
                    await TwoEnginesSpecs.deliverBesideAnother(.paused)
                }
            case .stopped:
                await #expect(processExitsWith: .success, Comment(rawValue: explanation)) {
                    await TwoEnginesSpecs.deliverBesideAnother(.stopped)
                }
            case .pausedBesideAResume:
                await #expect(processExitsWith: .success, Comment(rawValue: explanation)) {
                    await TwoEnginesSpecs.deliverBesideAnother(.pausedBesideAResume)
                }
            }
        LastWords.explain(outcome)
    }

    // Three engines: one runs jobs on a busy store, one keeps a job aside until open(_:), and a
    // third is stopped; then the first two, open on stores of their own, save again. Look at
    // where SyncEngine keeps its jobs and its store, and which queue stop() cancels: each
    // engine's own, or something every engine shares (a static list or store, a default queue
    // made once)? See "Running on a queue you own" and "The main queue is everybody's".
    // Covers: C75, C80
    // Paths: interference
    @Test(
        "stopping one engine leaves other engines' jobs alone, queued or waiting for open(_:), each saving into its own store"
    )
    func oneEngineStopLeavesOtherJobsAlone() async {
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process that stopped one of three engines stopped before it could judge.
            \(lesson.see("Running on a queue you own"))
            """
        ) {
            await TwoEnginesSpecs.stopBesideOthers()
        }
        LastWords.explain(outcome)
    }

    /// Stops one engine while another's jobs wait for a busy store and a third's wait for
    /// open(_:), then lets both go on. Runs in an exit test, beside no other spec.
    static func stopBesideOthers() async {
        let busyStore = Desk()
        let laterStore = Desk()
        let running = SyncEngine()
        running.open(busyStore)
        busyStore.hold()
        defer { busyStore.release() }
        let runningJobs = running.upload(notes("a", "b"))
        let waiting = SyncEngine()
        let waitingJobs = waiting.upload(notes("c"))
        let stopped = SyncEngine()
        await onTheMainQueue("the operation that stops a third engine") { stopped.stop() }
        busyStore.release()
        guard
            await waitUntil(
                "a and b, queued by an engine that was not stopped, to be saved",
                hint: """
                    Another engine's stop() reached them: cancelled \
                    \(runningJobs.filter(\.isCancelled).map(\.note.title)), the store saw \
                    \(busyStore.saves.timeline). Each engine cancels only its own queue: the \
                    default queue must be a new one for each engine.
                    \(lesson.see("Running on a queue you own"))
                    """,
                givingUpWhen: {
                    runningJobs.allSatisfy(\.isFinished) && busyStore.saves.count < 2
                        ? "both jobs ended and the store saw \(busyStore.saves.timeline)" : nil
                }, { busyStore.saves.count >= 2 })
        else { return }
        waiting.open(laterStore)
        guard
            await waitUntil(
                "c, kept aside until open(_:) by an engine that was not stopped, to be saved once it opened",
                hint: """
                    Another engine's stop() or open(_:) reached it: its job is \
                    \(waitingJobs[0].isCancelled ? "cancelled" : "not cancelled") and \
                    \(waitingJobs[0].isFinished ? "finished" : "unfinished"), and its store saw \
                    \(laterStore.saves.timeline). Keep the jobs waiting for open(_:) in each engine, \
                    never in a static list every engine shares.
                    \(lesson.see("Running on a queue you own"))
                    """,
                givingUpWhen: {
                    waitingJobs.allSatisfy(\.isFinished) && laterStore.saves.count < 1
                        ? "its job ended and its store saw \(laterStore.saves.timeline)" : nil
                }, { laterStore.saves.count >= 1 })
        else { return }
        // Two engines are open now, each on a store of its own: e belongs in the first one's.
        let laterJobs = running.upload(notes("e"))
        await waitUntil(
            "e, asked of the engine that opened the first store after another engine opened a second one, to be saved into the first",
            hint: """
                The first store saw \(busyStore.saves.timeline), the second \(laterStore.saves.timeline). \
                Each engine saves into the store it was handed: keep the store in the engine, never in \
                a static or a global that the last open(_:) of any engine overwrites.
                \(lesson.see("Running on a queue you own"))
                """,
            givingUpWhen: {
                laterStore.saved.contains("e") || (laterJobs.allSatisfy(\.isFinished) && !busyStore.saved.contains("e"))
                    ? "e's job ended and the stores saw \(busyStore.saves.timeline) and \(laterStore.saves.timeline)"
                    : nil
            }, { busyStore.saved.contains("e") })
    }

    /// Pauses or stops one engine while its updates wait on the main queue, then lets another
    /// engine deliver, and looks at both screens. Runs in an exit test, beside no other spec.
    static func deliverBesideAnother(_ other: OtherEngine) async {
        let store = Desk()
        let quiet = Screen()
        let busy = Screen()
        let quietEngine = SyncEngine(onSaved: quiet.onSaved)
        let busyEngine = SyncEngine(onSaved: busy.onSaved)
        quietEngine.open(store)
        busyEngine.open(store)
        defer { quietEngine.resumeUpdates() }
        let saved = Protected(false)
        // The quiet engine's updates queue up behind this operation, which then pauses or stops it.
        await onTheMainQueue("the operation that pauses or stops one engine") {
            let jobs = quietEngine.upload(notes("x", "y"), then: quiet.done())
            saved.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            switch other {
            case .paused, .pausedBesideAResume: quietEngine.pauseUpdates()
            case .stopped: quietEngine.stop()
            }
        }
        if other == .pausedBesideAResume {
            // Behind the quiet engine's updates, which are held by now.
            await onTheMainQueue("the operation that pauses and resumes the other engine") {
                busyEngine.pauseUpdates()
                busyEngine.resumeUpdates()
            }
        }
        guard saved.value else {
            Issue.record("The notes x and y were never saved; the store saw \(store.saves.timeline).")
            return
        }
        busyEngine.upload(notes("a", "b"), then: busy.done())
        guard
            await waitUntil(
                "a, b and done to reach the screen of the engine that was neither paused nor stopped",
                hint: """
                    With \(other), the other engine's screen received \(busy.updates.timeline) once \
                    its notes were saved (the store saw \(store.saves.timeline)). Pausing and \
                    stopping belong to one engine: keep its flags and held updates in the engine, \
                    never in a static or a global that every engine shares.
                    \(lesson.see("The main queue is everybody's"))
                    """, { busy.updates.count >= 3 })
        else { return }
        await onTheMainQueue("an operation queued after them") {}
        #expect(
            quiet.updates.count == 0,
            """
            With one engine \(other == .stopped ? "stopped" : "paused") and the other delivering, \
            the first engine's screen received \(quiet.updates.timeline). Its updates were \
            already waiting on the main queue: each must decide, when it runs, by its own \
            engine's state, and leave the other engine's alone.
            \(lesson.see("The main queue is everybody's"))
            """)
    }
}

/// What happens on the main queue right after `resumeUpdates()`.
enum AfterResuming: String, CaseIterable, Sendable, CustomStringConvertible {
    case stopInTheSameOperation = "stop() in the same main-queue operation"
    case newerUpdateWaiting = "a newer update already waiting on the main queue"
    case pausedAgain = "a second pause and resumeUpdates() with nothing held, then a new note"
    case resumedTwice = "resumeUpdates() twice"
    case stoppedWhilePaused = "stop() while paused, with an update on its way, then resumeUpdates()"

    var description: String { rawValue }
}

/// Where uploads come from that `stop()` must end.
enum LateUpload: String, CaseIterable, Sendable, CustomStringConvertible {
    case askedBeforeOpen = "asked for before open(_:), then stop()"
    case askedAfterStop = "asked for after stop()"
    case askedAfterStopNeverOpened = "asked for after stop(), the store never opened"
    case askedAfterStopThenOpened = "asked for after stop() and a later open(_:)"
    case waitingOnBusyStore = "waiting in the engine's queue for a busy store, then stop()"

    var description: String { rawValue }
}

@Suite("Held updates and stopped uploads", .watched, .enginesTried)
struct ResumeAndStopSpecs {
    // Updates a and b were held while paused. Look at what resumeUpdates() does with them: does
    // it deliver them itself, or send them to the main queue once more, behind whatever already
    // waits there? Does it forget them once delivered, un-pause even with nothing held, and
    // remember a stop()? See "The main queue is everybody's".
    // Covers: C80
    // Paths: reuse
    @Test(
        "resumeUpdates() delivers the held updates at once, only once, and never after stop()",
        arguments: AfterResuming.allCases)
    func resumeDeliversHeldUpdatesAtOnce(next: AfterResuming) async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(queue: queueOfItsOwn(), onSaved: screen.onSaved)
        engine.open(store)
        let saved = Protected(false)
        await onTheMainQueue("the operation that pauses updates") {
            let jobs = engine.upload(notes("a", "b"))
            saved.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            engine.pauseUpdates()
        }
        defer { engine.resumeUpdates() }
        guard saved.value else {
            Issue.record("The notes a and b were never saved; the store saw \(store.saves.timeline).")
            return
        }
        // The updates for a and b run now, and are held.
        await onTheMainQueue("an operation queued after the updates for a and b") {}
        guard screen.updates.count == 0 else {
            Issue.record(
                """
                While updates were paused, the screen received \(screen.updates.timeline): nothing \
                was held, so nothing can be resumed.
                \(lesson.see("The main queue is everybody's"))
                """)
            return
        }
        switch next {
        case .stopInTheSameOperation:
            await onTheMainQueue("the operation that resumes updates and stops the engine") {
                engine.resumeUpdates()
                engine.stop()
                screen.updates.record("stop() returned")
            }
            await onTheMainQueue("an operation queued after it") {}
            let updates = screen.updates.all
            let late = updates.drop { $0 != "stop() returned" }.dropFirst()
            #expect(
                late.isEmpty,
                """
                resumeUpdates() then stop(), in one main-queue operation: the screen received \
                \(screen.updates.timeline). Nothing may reach the screen after stop() returned; \
                held updates sent to the main queue once more arrive after it.
                \(lesson.see("The main queue is everybody's"))
                """)
        case .pausedAgain:
            await onTheMainQueue("the operation that resumes updates") { engine.resumeUpdates() }
            await onTheMainQueue("the operation that pauses and resumes updates again") {
                engine.pauseUpdates()
                engine.resumeUpdates()
            }
            // Resumed with nothing held: the engine delivers again, and only what is new.
            let savedC = Protected(false)
            await onTheMainQueue("the operation that saves c") {
                let jobs = engine.upload(notes("c"))
                savedC.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
            }
            guard savedC.value else {
                Issue.record("The note c was never saved; the store saw \(store.saves.timeline).")
                return
            }
            await onTheMainQueue("an operation queued after c's update") {}
            #expect(
                screen.updates.all == ["a", "b", "c"],
                """
                Paused, resumed, then paused and resumed again with nothing held, then c was saved: \
                the screen received \(screen.updates.timeline); expected a, b, c, once each. \
                Delivered updates are no longer held, and resumeUpdates() lets new updates through \
                whether or not it had anything to deliver.
                \(lesson.see("The main queue is everybody's"))
                """)
        case .resumedTwice:
            await onTheMainQueue("the operation that resumes updates twice") {
                engine.resumeUpdates()
                engine.resumeUpdates()
            }
            await onTheMainQueue("an operation queued after it") {}
            #expect(
                screen.updates.all == ["a", "b"],
                """
                a and b were held, then resumeUpdates() was called twice: the screen received \
                \(screen.updates.timeline); expected a and b, once each. resumeUpdates() forgets \
                the updates it delivered.
                \(lesson.see("The main queue is everybody's"))
                """)
        case .stoppedWhilePaused:
            // c's update is sent meanwhile, and waits on the main queue behind this operation:
            // it runs after stop() and resumeUpdates() have both returned.
            let savedC = Protected(false)
            await onTheMainQueue("the operation that saves c, stops the engine, then resumes updates") {
                let jobs = engine.upload(notes("c"))
                savedC.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
                engine.stop()
                engine.resumeUpdates()
            }
            guard savedC.value else {
                Issue.record("The note c was never saved; the store saw \(store.saves.timeline).")
                return
            }
            await onTheMainQueue("an operation queued after c's update") {}
            #expect(
                screen.updates.count == 0,
                """
                a and b were held and c's update was waiting on the main queue when stop() and \
                resumeUpdates() were called: the screen received \(screen.updates.timeline). \
                stop() drops every update not yet delivered, the held ones and those still on their \
                way, and resumeUpdates() does not undo it: a stopped engine stays stopped.
                \(lesson.see("The main queue is everybody's"))
                """)
        case .newerUpdateWaiting:
            let savedC = Protected(false)
            await onTheMainQueue("the operation that saves c and resumes updates") {
                let jobs = engine.upload(notes("c"))
                savedC.withValue { $0 = settles(within: patience) { jobs.allSatisfy(\.isFinished) } }
                engine.resumeUpdates()
            }
            guard savedC.value else {
                Issue.record("The note c was never saved; the store saw \(store.saves.timeline).")
                return
            }
            await waitUntil(
                "a, b and c to reach the screen after resumeUpdates()",
                hint: "The screen received \(screen.updates.timeline). \(lesson.see("The main queue is everybody's"))"
            ) { screen.updates.count >= 3 }
            #expect(
                screen.updates.all == ["a", "b", "c"],
                """
                a and b were held, c's update was already waiting on the main queue when \
                resumeUpdates() ran, and the screen received \(screen.updates.timeline); expected \
                a, b, c: the held updates are older, so they go first.
                \(lesson.see("The main queue is everybody's"))
                """)
        }
    }

    // Look at what stop() does with the jobs that never reached the queue (those waiting for
    // open(_:)) and at what upload(_:then:) does once the engine has stopped, an open(_:) after
    // stop() included. A cancelled job that nobody starts never finishes, and whatever depends on
    // it waits for good. See "The main queue is everybody's" and "Running on a queue you own".
    // And at the jobs already in the engine's queue, waiting for a busy store: has any of them
    // started? And at an empty batch's done: is it an update like the others?
    // Covers: C75, C80
    // Paths: reuse, values
    @Test(
        "after stop(), every upload ends without saving, and its batch never reports done",
        arguments: LateUpload.allCases
    )
    func stopEndsEveryUpload(upload: LateUpload) async {
        let store = Desk()
        let screen = Screen()
        let queue = queueOfItsOwn()
        let engine = SyncEngine(queue: queue, onSaved: screen.onSaved)
        if upload == .askedAfterStop || upload == .waitingOnBusyStore { engine.open(store) }
        // A busy store: the jobs wait in the engine's queue and on the store's queue, unstarted.
        if upload == .waitingOnBusyStore { store.hold() }
        defer { store.release() }
        let stopsFirst = [.askedAfterStop, .askedAfterStopNeverOpened, .askedAfterStopThenOpened].contains(upload)
        let asked = Protected<[UploadJob]>([])
        await onTheMainQueue("the operation that asks for uploads and stops the engine") {
            if stopsFirst { engine.stop() }
            if upload == .askedAfterStopThenOpened { engine.open(store) }
            // An empty batch too: its done is an update like the others, dropped once stopped.
            engine.upload([], then: screen.done("an empty batch's done"))
            let jobs = engine.upload(notes("a", "b"), then: screen.done()) + [engine.uploadNow(Note("urgent"))]
            asked.withValue { $0 = jobs }
            if !stopsFirst { engine.stop() }
        }
        store.release()
        let jobs = asked.value
        await waitUntil(
            "every job (\(upload)) to end after stop()",
            hint: """
                \(jobs.filter { !$0.isFinished }.map(\.note.title)) never finished \
                (cancelled: \(jobs.filter(\.isCancelled).map(\.note.title))). A job that no queue \
                holds is the engine's to cancel and to end, or its batch's end waits for it forever.
                \(lesson.see("Running on a queue you own"))
                """,
            givingUpWhen: {
                store.saves.count > 0 ? "the store saved \(store.saves.timeline) after stop()" : stuck(jobs, in: queue)
            }
        ) { jobs.allSatisfy(\.isFinished) }
        #expect(
            store.saves.count == 0,
            """
            Uploads \(upload): the store saved \(store.saves.timeline). After stop() nothing may \
            be saved, not even after a later open(_:): stop() cancels the jobs in the engine's own queue too, those already handed \
            to the busy store's queue included, since none of them has started.
            \(lesson.see("Running on a queue you own"))
            """)
        let uncancelled = jobs.filter { $0.isFinished && !$0.isCancelled }.map(\.note.title)
        #expect(
            uncancelled.isEmpty,
            """
            Uploads \(upload): after stop(), the jobs \(uncancelled) ended without saving and are \
            not cancelled, so to their caller they look saved. Cancel each job before ending it.
            \(lesson.see("Running on a queue you own"))
            """)
        await onTheMainQueue("an operation queued after the jobs ended") {}
        await onTheMainQueue("an operation queued after what that one let run") {}
        #expect(
            screen.updates.count == 0,
            """
            Uploads \(upload): the screen received \(screen.updates.timeline). A batch's done, an \
            empty batch's included, is an update like the others: dropped once the engine stopped.
            \(lesson.see("The main queue is everybody's"))
            """)
    }
}
