import Chapter11
import Foundation
import KataTestSupport
import Testing

@Suite("Batches report their progress and their end", .watched, .enginesTried)
struct BatchSpecs {
    // Look at SyncEngine.progress and at what upload(_:then:) and uploadNow(_:) do to it. When
    // does a queue's progress count a unit, and what must you set first? See "Progress counts
    // finished work".
    // Covers: C78
    // Paths: values
    @Test(
        "progress reads 0 % while nothing is saved and exactly 100 % once every note is, in a batch of 7 and of 64",
        arguments: [7, 64])
    func progressCountsSavedNotesOnly(batchSize: Int) async {
        let store = Desk()
        let engine = SyncEngine(queue: queueOfItsOwn())
        engine.open(store)
        store.hold()
        defer { store.release() }
        // Seven notes, more than any other spec's batch, and 64, more than a cap picked as "a
        // large batch": a total raised by less than the number of jobs (a cap, a fixed step) shows.
        let batch = (1...batchSize).map { Note("note \($0)") }
        let jobs = engine.upload(batch) + [engine.uploadNow(Note("urgent"))]
        #expect(
            engine.progress.fractionCompleted == 0,
            """
            With the store busy and nothing saved, progress reads \(described(engine.progress)); \
            expected 0 %. A note counts once its job has saved it, not when it is asked for.
            \(lesson.see("Progress counts finished work"))
            """)
        store.release()
        await waitUntil(
            "progress to read exactly 100 % once the \(batchSize) notes of the batch and the urgent note were saved",
            timeout: patience,
            hint: lesson.see("Progress counts finished work"),
            givingUpWhen: {
                guard jobs.allSatisfy(\.isFinished) else { return nil }
                let progress = engine.progress
                if progress.totalUnitCount == 0 {
                    return "every note was saved, and progress has no total: it counts nothing"
                }
                if progress.fractionCompleted > 1 {
                    return """
                        every note was saved, and progress read \(described(progress)): the total \
                        leaves out notes that were counted; raise it by the number of jobs added
                        """
                }
                return nil
            }
        ) { jobs.allSatisfy(\.isFinished) && engine.progress.fractionCompleted == 1 }
    }

    // Look at what each call of upload(_:then:) does to the total of SyncEngine.progress. See
    // "Progress counts finished work".
    // Covers: C78
    @Test("a second batch adds to the total: with two of four notes saved, progress reads 50 %")
    func progressAddsUpAcrossBatches() async {
        let store = Desk()
        let engine = SyncEngine(queue: queueOfItsOwn())
        engine.open(store)
        let first = engine.upload(notes("a", "b"))
        guard
            await waitUntil(
                "the first batch's progress to reach 100 %", timeout: patience,
                hint: lesson.see("Progress counts finished work"),
                givingUpWhen: {
                    first.allSatisfy(\.isFinished) && engine.progress.totalUnitCount == 0
                        ? "both notes were saved, and progress has no total, so it counts nothing" : nil
                }, { first.allSatisfy(\.isFinished) && engine.progress.fractionCompleted == 1 })
        else { return }
        store.hold()
        defer { store.release() }
        let second = engine.upload(notes("c", "d"))
        #expect(
            engine.progress.fractionCompleted == 0.5,
            """
            Two notes saved, two more waiting for the busy store: progress reads \
            \(described(engine.progress)); expected 50 %. The total covers every note asked for, \
            the first batch's included.
            \(lesson.see("Progress counts finished work"))
            """)
        store.release()
        await waitUntil(
            "progress to reach 100 % once c and d are saved", timeout: patience,
            hint: "Progress read \(described(engine.progress)). \(lesson.see("Progress counts finished work"))"
        ) { second.allSatisfy(\.isFinished) && engine.progress.fractionCompleted == 1 }
    }

    // Look at how upload(_:then:) learns that its batch is done, and on which queue it calls
    // done. See "A barrier holds back everything after it".
    // Covers: C79
    @Test("done is called once, on the main queue, after every note of its batch is saved")
    func batchDoneComesOnTheMainQueueAfterItsNotes() async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(queue: queueOfItsOwn())
        engine.open(store)
        let savedWhenDone = Protected<[String]?>(nil)
        let done = screen.done()
        engine.upload(notes("a", "b", "c")) {
            savedWhenDone.withValue { $0 = store.saved }
            done()
        }
        guard
            await waitUntil(
                "the batch's done to be called", timeout: patience,
                hint: """
                    The store saw \(store.saves.timeline). \
                    \(lesson.see("A barrier holds back everything after it"))
                    """,
                { screen.updates.count > 0 })
        else { return }
        await onTheMainQueue("an operation queued after done") {}
        #expect(
            screen.updates.all == ["done"],
            """
            done was called as \(screen.updates.timeline); expected once, on the main queue, which \
            is where the screen reads it.
            \(lesson.see("A barrier holds back everything after it"))
            """)
        let seen = savedWhenDone.value ?? []
        #expect(
            ["a", "b", "c"].allSatisfy(seen.contains),
            """
            done was called when the store had saved only \(seen): a batch is done once all its \
            notes are saved.
            \(lesson.see("A barrier holds back everything after it"))
            """)
    }

    // Two things decide this order: what upload(_:then:) adds to learn that its batch is done
    // (a barrier holds back every job added after it), and the width of the engine's queue (a
    // wide queue hands every job to the serial store at once). The timeline in the message tells
    // which. See "A barrier holds back everything after it" and "A serial queue underneath is
    // not a width of one".
    // Covers: C79, C76
    @Test("an urgent note asked for after a batch is saved before the batch's waiting notes")
    func laterUrgentNoteIsNotHeldBackByABatch() async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(queue: queueOfItsOwn())
        engine.open(store)
        store.hold()
        defer { store.release() }
        engine.upload(notes("a", "b", "c"), then: screen.done())
        engine.uploadNow(Note("urgent"))
        store.release()
        guard
            await waitUntil(
                "all four notes to be saved", timeout: patience,
                hint: """
                    The store saw \(store.saves.timeline). \
                    \(lesson.see("A barrier holds back everything after it"))
                    """,
                { store.saves.count >= 4 })
        else { return }
        let saved = store.saved
        let urgentBeforeC = (saved.firstIndex(of: "urgent") ?? .max) < (saved.firstIndex(of: "c") ?? .max)
        #expect(
            urgentBeforeC,
            """
            The urgent note, asked for after the batch, was saved after c: \(store.saves.timeline). \
            Either what marks the batch as done held back the jobs added after it (a barrier), or \
            the queue handed every job to the store at once and could no longer choose the urgent \
            one (a width other than one).
            \(lesson.see("A barrier holds back everything after it"))
            """)
    }
}

/// Batches whose `done` a spec follows.
enum Batches: String, CaseIterable, Sendable, CustomStringConvertible {
    case twoInFlight = "two batches in flight at once"
    case empty = "an empty batch"
    case lastMadeUrgent = "a batch whose last job the caller made urgent while the store was busy"

    var description: String { rawValue }
}

@Suite("Each batch has its own end", .watched, .enginesTried)
struct BatchEndSpecs {
    // Look at where upload(_:then:) keeps a batch's done until the batch ends, and at what
    // decides that it ended: the engine may have several batches in flight, a batch may be
    // empty, and its caller may reorder its jobs. See "A barrier holds back everything after it".
    // Covers: C79
    // Paths: interference, values, collaborators
    @Test(
        "every batch's done is called once, after its own notes: two in flight, an empty one, one its caller reordered",
        arguments: Batches.allCases)
    func eachBatchGetsItsOwnDone(batches: Batches) async {
        let store = Desk()
        let screen = Screen()
        let engine = SyncEngine(queue: queueOfItsOwn())
        engine.open(store)
        store.hold()
        defer { store.release() }
        // What the store had saved when each done was called, by the batch's name.
        let savedWhenDone = Recorder<(batch: String, saved: [String])>()
        func done(_ name: String) -> @Sendable () -> Void {
            let record = screen.done(name)
            return {
                savedWhenDone.record((name, store.saved))
                record()
            }
        }
        let asked: [(name: String, notes: [Note])] =
            switch batches {
            case .twoInFlight: [("first batch's done", notes("a", "b")), ("second batch's done", notes("c", "d"))]
            case .empty: [("empty batch's done", [])]
            case .lastMadeUrgent: [("the batch's done", notes("a", "b", "c"))]
            }
        let jobs = asked.map { engine.upload($0.notes, then: done($0.name)) }
        var gate: Gate?
        if batches == .lastMadeUrgent {
            // The caller may change the jobs it was handed: the last one, made urgent while the
            // store is busy, is saved before b, whose save then waits at a gate.
            jobs[0].last?.queuePriority = .veryHigh
            gate = store.pause(atSave: 3)
        }
        defer { gate?.open() }
        store.release()
        if let gate {
            // A done that waits for every note of its batch cannot come while b waits. One that
            // waits for fewer was sent on its way when the save before b ended, so the window
            // opens once the third save reached the store, and lasts only as long as that journey.
            if await waitUntil(
                "the batch's third save to reach the store",
                hint: "The store saw \(store.saves.timeline).", { store.arrivals.count >= 3 })
            {
                await onTheMainQueue("an operation queued once the third save reached the store") {}
                _ = await comesTrue(within: Bound.scaled(.milliseconds(60))) { screen.updates.count > 0 }
            }
            gate.open()
        }
        let names = asked.map(\.name)
        guard
            await waitUntil(
                "a done for each of \(names.joined(separator: " and ")) to be called",
                hint: """
                    The screen received \(screen.updates.timeline); the store saw \
                    \(store.saves.timeline). A batch is done once all its notes are saved, which \
                    for an empty batch is at once.
                    \(lesson.see("A barrier holds back everything after it"))
                    """, { screen.updates.count >= names.count })
        else { return }
        await onTheMainQueue("an operation queued after the dones") {}
        #expect(
            screen.updates.all.sorted() == names.sorted(),
            """
            With \(batches), the screen received \(screen.updates.timeline); expected \
            \(names.joined(separator: " and ")), once each, on the main queue. \
            \(screen.updates.contains { $0.hasSuffix("(off the main queue)") }
                ? "The screen reads done on the main queue: send it there."
                : "Each call of upload(_:then:) has a done of its own: keep it with its batch, not in one place for the whole engine.")
            \(lesson.see("A barrier holds back everything after it"))
            """)
        for (name, notes) in asked {
            let titles = notes.map(\.title)
            for record in savedWhenDone.all where record.batch == name {
                #expect(
                    titles.allSatisfy(record.saved.contains),
                    """
                    \(name) was called when the store had saved only \(record.saved); its batch is \
                    \(titles). A batch is done once all its own notes are saved.
                    \(lesson.see("A barrier holds back everything after it"))
                    """)
            }
        }
    }
}

/// A progress in words, for messages: "1 of 4 (25 %)".
func described(_ progress: Progress) -> String {
    let percent = Int((progress.fractionCompleted * 100).rounded())
    return "\(progress.completedUnitCount) of \(progress.totalUnitCount) (\(percent) %)"
}

/// The first call that asks an engine for work.
enum FirstCall: String, CaseIterable, Sendable, CustomStringConvertible {
    case batch = "upload(_:then:)"
    case urgent = "uploadNow(_:)"

    var description: String { rawValue }
}

@Suite("Progress counts jobs that end at once", .watched, .enginesTried)
struct EarlyProgressSpecs {
    // The store is free, and the jobs end before the call that asked for them returns. Look at
    // where upload(_:then:) and uploadNow(_:) raise the total of SyncEngine.progress: before or
    // after the jobs reach the queue? See "Progress counts finished work".
    // Covers: C78
    @Test("a job that ends before the call that asked for it returns still counts", arguments: FirstCall.allCases)
    func progressCountsJobsThatEndAtOnce(first: FirstCall) async {
        let store = Desk()
        let queue = EngineQueue()
        let engine = SyncEngine(queue: queue)
        engine.open(store)
        let added = Protected<[String]?>(nil)
        queue.afterNextAdding { operations in
            // The window: the jobs are in the queue, the engine's next lines have not run yet.
            // Bounded generously: on a free store the jobs end within milliseconds.
            _ = settles(within: Bound.standard) { operations.allSatisfy(\.isFinished) }
            added.withValue { $0 = operations.map { $0.name ?? "an operation" } }
        }
        let jobs =
            switch first {
            case .batch: engine.upload(notes("a", "b"))
            case .urgent: [engine.uploadNow(Note("urgent"))]
            }
        guard added.value != nil else {
            Issue.record(
                """
                \(first) never added a job to the operation queue the engine was given: an engine \
                runs its jobs on the queue passed to init(queue:onSaved:).
                \(lesson.see("Progress counts finished work"))
                """)
            return
        }
        await waitUntil(
            "progress to read 100 % once every job asked for had ended", timeout: patience,
            hint: """
                Every job ended and progress read \(described(engine.progress)). Here the jobs \
                ended before \(first) returned: a job that ends before any total was set is never \
                counted, so the total must be raised before the jobs reach the queue.
                \(lesson.see("Progress counts finished work"))
                """,
            givingUpWhen: {
                jobs.allSatisfy(\.isFinished) && engine.progress.totalUnitCount == 0
                    ? "every job ended, and progress has no total: it counts nothing" : nil
            }
        ) { jobs.allSatisfy(\.isFinished) && engine.progress.fractionCompleted == 1 }
    }
}
