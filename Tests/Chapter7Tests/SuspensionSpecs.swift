import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Suspending a queue stops new starts but lets running work finish", .watched)
struct SuspensionSpecs {
    // isSuspended = true only keeps waiting operations from starting; copies already running go
    // on. Look at pauseForEject: when may it call ready, and what it keeps of a ready once called?
    // Covers: C54
    // Paths: reuse, collaborators
    @Test("the card is ready to eject only after the running copies finish, and nothing new starts; again when idle")
    func ejectWaitsForRunningCopies() async {
        let events = Recorder<String>()
        let source = HeldSource(events: events)
        let reports = Reports()
        let queue = WatchedQueue(serialStarts: true)
        let importer = PhotoImporter(source: source, width: 2, queue: queue, onReport: reports.callback)
        let jobs = photos(4).map { importer.add($0) }
        await waitUntil("two photos to start copying") { source.started.count >= 2 }
        let running = source.running

        let ready = Protected(false)
        let readyCalls = Protected(0)
        guard
            await returning(
                "pauseForEject(then:)", section: "Suspending stops starts, not work",
                {
                    importer.pauseForEject {
                        events.record("ready")
                        readyCalls.withValue { $0 += 1 }
                        ready.withValue { $0 = true }
                    }
                }) != nil
        else { return source.completeAll() }
        let tooSoon = """
            pauseForEject said the card was ready while \(running.joined(separator: " and ")) were \
            still copying. Suspending a queue does not pause operations that are executing: wait \
            for them to finish before calling ready.
            \(lesson.see("Suspending stops starts, not work"))
            """
        #expect(!ready.value, "\(tooSoon)")

        // One copy ends; the other still runs. By the time the first one's report is delivered,
        // code that calls ready regardless has had its chance, and the queue has made its choice.
        source.complete(running[0], bytes: 500)
        await waitUntil(
            "the report for \(running[0]), which finished while the queue was paused",
            hint: lesson.see("Suspending stops starts, not work")
        ) { reports.report(for: running[0]) != nil }
        await queue.settle()
        #expect(!ready.value, "\(tooSoon)")
        #expect(
            source.started.count == 2,
            """
            While the import was paused for ejecting, new copies started: \
            \(source.started.joined(separator: ", ")). Suspend the queue so that waiting photos \
            stay waiting.
            \(lesson.see("Suspending stops starts, not work"))
            """
        )

        source.complete(running[1], bytes: 500)
        await waitUntil(
            "the card to be ready once the running copies finished",
            hint: """
                Suspending leaves the waiting photos in the queue: wait only for the copies that \
                were executing.
                \(lesson.see("Suspending stops starts, not work"))
                """
        ) { ready.value }
        #expect(
            events.recorded("\(running[1]) completed", before: "ready"),
            "\(tooSoon)\nObserved: \(events.timeline)"
        )
        let finished = jobs.filter { running.contains($0.photo) }.map(\.outcome)
        #expect(
            finished == [.imported(bytes: 500), .imported(bytes: 500)],
            """
            The copies running when the import paused should complete normally; their outcomes \
            were \(finished.map { "\($0)" }.joined(separator: ", ")).
            \(lesson.see("Suspending stops starts, not work"))
            """
        )

        guard await returning("resume()", section: "Suspending stops starts, not work", { importer.resume() }) != nil
        else { return source.completeAll() }
        await waitUntil("the rest of the photos to import after resume()") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }

        // A second pause, with nothing copying: the card is free at once.
        let readyAgain = Protected(false)
        guard
            await returning(
                "pauseForEject(then:) a second time", section: "Suspending stops starts, not work",
                { importer.pauseForEject { readyAgain.withValue { $0 = true } } }) != nil
        else { return source.completeAll() }
        await waitUntil(
            "the card to be ready after a second pauseForEject(then:), with nothing copying",
            hint: """
                A pause with no copy running has nothing to wait for: ready comes at once, also \
                the second time. Whatever pauseForEject remembers from one pause must not stop \
                the next one.
                \(lesson.see("Suspending stops starts, not work"))
                """
        ) { readyAgain.value }
        // A ready kept after its pause ended comes again at a later idle moment or pause.
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { readyCalls.value > 1 }
        #expect(
            readyCalls.value == 1,
            """
            The first pauseForEject's ready was called \(readyCalls.value) times: once when its \
            copies finished, then again after resume(), when later copies ended or the card was \
            paused again. A pause says ready once; whatever pauseForEject keeps to call it (a list \
            of waiters, a timer, a check) must let go of it once it has been called.
            Observed: \(events.timeline)
            \(lesson.see("Suspending stops starts, not work"))
            """
        )
        _ = await returning("resume()", section: "Suspending stops starts, not work") { importer.resume() }
    }

    // Between looking at what runs and suspending, the queue may start one more copy. Look at
    // the order of the two steps in pauseForEject.
    // Covers: C54
    @Test("a copy that starts while pauseForEject is still suspending the queue is waited for too")
    func ejectWaitsForACopyStartedAsItPauses() async {
        let events = Recorder<String>()
        let source = HeldSource(events: events)
        let reports = Reports()
        let queue = WatchedQueue(serialStarts: true)
        let importer = PhotoImporter(source: source, width: 1, queue: queue, onReport: reports.callback)
        let names = photos(3)
        guard
            await returning(
                "add(_:) of three photos", section: "Configure, then enqueue",
                {
                    names.forEach { importer.add($0) }
                }) != nil
        else { return source.completeAll() }
        await waitUntil("the first photo to start copying") { source.hasStarted(names[0]) }

        // Inside pauseForEject, right before the queue is suspended: the running copy ends and
        // the queue, not yet suspended, starts the next one. The next start is held until the
        // first copy has returned completely, so a design that counts copies cannot see the new
        // one begin before the old one ends.
        queue.beforeSuspending.withValue {
            $0 = {
                queue.holdStarts()
                source.complete(names[0])
                queue.releaseStarts()
                _ = settles(within: Bound.standard) { source.hasStarted(names[1]) }
            }
        }
        let ready = Protected(false)
        guard
            await returning(
                "pauseForEject(then:)", section: "Suspending stops starts, not work",
                {
                    importer.pauseForEject {
                        events.record("ready")
                        ready.withValue { $0 = true }
                    }
                }) != nil
        else { return source.completeAll() }
        source.complete(names[0])  // in case pauseForEject never suspended the queue
        await waitUntil(
            "the report for \(names[0])",
            hint: lesson.see("Completion blocks report results")
        ) { reports.report(for: names[0]) != nil }
        // Whatever pauseForEject waits for has had its chance to call ready by now if it will.
        _ = await comesTrue(within: Bound.scaled(.milliseconds(100))) { ready.value }
        let copying = source.running
        #expect(
            !ready.value || copying.isEmpty,
            """
            pauseForEject said the card was ready while \(copying.joined(separator: ", ")) was still \
            copying: that copy started after pauseForEject looked at what was running and before \
            the queue was suspended. Suspend first, then look: once the queue is suspended, nothing \
            new starts, so what runs then is all there is to wait for.
            Observed: \(events.timeline)
            \(lesson.see("Suspending stops starts, not work"))
            """
        )

        await waitUntil("the card to be ready once the running copy finished") {
            source.completeAll()
            return ready.value
        }
        guard await returning("resume()", section: "Suspending stops starts, not work", { importer.resume() }) != nil
        else { return source.completeAll() }
        await waitUntil("the rest of the photos to import after resume()") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }
    }

    // The card is written from the moment an import calls the source, before that call returns.
    // Look at when an import counts as running: before it calls the source, or once the call is back?
    // Covers: C54
    // Paths: collaborators
    @Test("a copy whose call to the card has not returned yet is waited for too")
    func ejectWaitsForACopyStillInItsSourceCall() async {
        let events = Recorder<String>()
        let source = HeldSource(events: events)
        let importer = PhotoImporter(source: source, width: 1, queue: OperationQueue())
        let photo = photos(1)[0]
        let ready = Protected(false)
        let paused = Protected(false)
        // Inside the import's call to the source, before it returns, another thread pauses for
        // eject and gets a short while to return.
        source.duringCopy.withValue {
            $0 = { _ in
                source.duringCopy.withValue { $0 = nil }
                Thread.detachNewThread {
                    importer.pauseForEject {
                        events.record("ready")
                        ready.withValue { $0 = true }
                    }
                    paused.withValue { $0 = true }
                }
                _ = settles(within: Bound.standard) { paused.value }
            }
        }
        guard await returning("add(_:)", section: "Configure, then enqueue", { _ = importer.add(photo) }) != nil
        else { return source.completeAll() }
        guard
            await waitUntil(
                "pauseForEject(then:), called while the import's call to copy \(photo) ran, to return",
                hint: lesson.see("Suspending stops starts, not work"),
                { paused.value })
        else { return source.completeAll() }
        // A ready that missed the copy comes now; the window closes early.
        _ = await comesTrue(within: Bound.scaled(.milliseconds(100))) { ready.value }
        let early = ready.value
        source.complete(photo)
        await waitUntil(
            "the card to be ready once the copy of \(photo) returned",
            hint: lesson.see("Suspending stops starts, not work")
        ) { ready.value }
        #expect(
            !early,
            """
            pauseForEject said the card was ready while \(photo) was still being copied: the import \
            had called the source to copy it, and that call had not returned yet when the pause \
            looked at what was running. The card is written from the moment the import calls the \
            source, so the import counts as running before that call: mark it executing (or count \
            the copy) first, then call the source.
            Observed: \(events.timeline)
            \(lesson.see("Suspending stops starts, not work"))
            """
        )
        guard await returning("resume()", section: "Suspending stops starts, not work", { importer.resume() }) != nil
        else { return source.completeAll() }
        await waitUntil("\(photo) to leave the queue after resume()") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }
    }

    // A cancelled copy still writes the card until it returns: cancel() only sets a flag. Look at
    // which imports pauseForEject waits for, and whether a cancel takes one off that list.
    // Covers: C54
    // Paths: reuse
    @Test("pausing right after cancelAll() waits for the cancelled copies that still write the card")
    func ejectAfterCancelAllWaitsForCancelledCopies() async {
        let events = Recorder<String>()
        let source = HeldSource(events: events)
        let reports = Reports()
        let queue = WatchedQueue(serialStarts: true)
        let importer = PhotoImporter(source: source, width: 2, queue: queue, onReport: reports.callback)
        guard
            await returning(
                "add(_:) of four photos", section: "Configure, then enqueue", { photos(4).forEach { importer.add($0) } }
            )
                != nil
        else { return source.completeAll() }
        await waitUntil("two photos to start copying") { source.started.count >= 2 }
        let running = source.running

        let ready = Protected(false)
        guard
            await returning(
                "cancelAll(), then pauseForEject(then:)", section: "Suspending stops starts, not work",
                { () -> Void in
                    importer.cancelAll()
                    importer.pauseForEject {
                        events.record("ready")
                        ready.withValue { $0 = true }
                    }
                }) != nil
        else { return source.completeAll() }
        // A ready that does not wait for the cancelled copies comes now; the window closes early.
        _ = await comesTrue(within: Bound.scaled(.milliseconds(100))) { ready.value }
        source.complete(running[0])
        await waitUntil(
            "the report for \(running[0]), cancelled while it copied",
            hint: lesson.see("Completion blocks report results")
        ) { reports.report(for: running[0]) != nil }
        await queue.settle()
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { ready.value }
        source.complete(running[1])
        await waitUntil(
            "the card to be ready once the cancelled copies returned",
            hint: lesson.see("Suspending stops starts, not work"),
            givingUpWhen: { source.started.count > 2 ? "copies started while paused: \(source.started)" : nil }
        ) { ready.value }
        #expect(
            events.recorded("\(running[1]) completed", before: "ready"),
            """
            pauseForEject, called right after cancelAll(), said the card was ready while \
            \(running.joined(separator: " and ")), cancelled while they copied, were still writing \
            it. A cancel only sets a flag: a cancelled import goes on executing until its copy \
            returns, so it is among the copies to wait for.
            Observed: \(events.timeline)
            \(lesson.see("Suspending stops starts, not work"))
            """
        )
        guard await returning("resume()", section: "Suspending stops starts, not work", { importer.resume() }) != nil
        else { return source.completeAll() }
        await waitUntil("the cancelled photos to leave the queue after resume()") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }
    }
}
