import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Cancelling is the only way to take work back from a queue", .watched)
struct CancellationSpecs {
    /// The two ways the importer cancels work.
    enum Cancel: String, CaseIterable, Sendable {
        case remove = "remove(_:)"
        case cancelAll = "cancelAll()"
    }

    // cancelAllOperations marks every import cancelled; the queue then starts each one. Look at
    // cancelAll, and at what PhotoImport.start() and the end of a copy do with isCancelled.
    // Covers: C50, C51
    @Test("cancelling the whole import skips every waiting photo, and the queue still drains")
    func cancelAllDrainsTheQueue() async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: 1)
        let names = photos(5)
        guard
            let jobs = await returning(
                "add(_:) of five photos", section: "Configure, then enqueue",
                {
                    names.map { importer.add($0) }
                })
        else { return source.completeAll() }
        await waitUntil("the first photo to start copying") { source.hasStarted(names[0]) }

        guard
            await returning(
                "cancelAll()", section: "Cancelling is the only way out of a queue",
                {
                    importer.cancelAll()
                }) != nil
        else { return source.completeAll() }
        source.complete(names[0])
        await waitUntil(
            "all five imports to finish after cancelAll() (queue still holds \(importer.queue.operationCount))",
            hint: """
                A cancelled operation leaves the queue only by being started and finishing; a \
                suspended queue starts nothing.
                \(lesson.see("Cancelling is the only way out of a queue"))
                """,
            givingUpWhen: {
                importer.queue.isSuspended
                    ? "the queue is suspended: it starts nothing, so the cancelled imports cannot finish"
                    : nil
            }
        ) { jobs.allSatisfy(\.isFinished) || source.started.count > 1 }

        #expect(
            source.started == [names[0]],
            """
            After cancelAll() only \(names[0]) (already copying) should ever have been copied; \
            copies started for \(source.started.joined(separator: ", ")). The queue starts \
            cancelled operations too: start() must check isCancelled and finish without working.
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        let outcomes = jobs.map(\.outcome)
        #expect(
            outcomes.allSatisfy { $0 == .cancelled },
            """
            Every import was cancelled, so every outcome should be .cancelled; they were \
            \(outcomes.map { "\($0)" }.joined(separator: ", ")).
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        if jobs.allSatisfy(\.isFinished) {
            await waitUntil(
                "the queue to empty once every cancelled import finished",
                hint: lesson.see("Cancelling is the only way out of a queue")
            ) { importer.queue.operationCount == 0 }
        }
        source.completeAll()
    }

    // There is no way to take one operation out of a queue but one. Look at what remove(_:) does
    // to the import itself, and at what the importer still knows about it afterwards.
    // Covers: C52, C60
    // Paths: collaborators
    @Test("removing a waiting photo cancels it: it is never copied, the queue empties, its outcome stays known")
    func removeCancels() async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: 1)
        let names = photos(3)
        guard
            let jobs = await returning(
                "add(_:) of three photos", section: "Configure, then enqueue",
                {
                    names.map { importer.add($0) }
                })
        else { return source.completeAll() }
        await waitUntil("the first photo to start copying") { source.hasStarted(names[0]) }

        guard
            await returning(
                "remove(_:)", section: "Cancelling is the only way out of a queue",
                {
                    importer.remove(jobs[1])
                }) != nil
        else { return source.completeAll() }
        source.complete(names[0])
        await waitUntil("another photo to start copying after the first") { source.started.count >= 2 }
        #expect(
            !source.hasStarted(names[1]),
            """
            \(names[1]) was removed while it waited, yet the queue started copying it \
            (copies: \(source.started.joined(separator: " → "))). Once added, an operation belongs \
            to the queue until it finishes; the only way to take it back is job.cancel().
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )

        await waitUntil("the queue to empty") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }
        #expect(
            jobs[1].isCancelled && jobs[1].outcome == .cancelled,
            """
            The removed import should end cancelled, with outcome .cancelled; isCancelled is \
            \(jobs[1].isCancelled) and the outcome is \(jobs[1].outcome).
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        let known = await returning("outcome(of:)", section: "Keep your own references") {
            importer.outcome(of: names[1])
        }
        #expect(
            known.flatMap({ $0 }) == .cancelled,
            """
            outcome(of: "\(names[1])") answered \(known.flatMap { $0 }.map { "\($0)" } ?? "nil") for the \
            removed photo; expected cancelled. The importer added it, so it still knows what became \
            of it: removing takes a photo out of the queue, not out of the importer's records.
            \(lesson.see("Keep your own references"))
            """
        )
    }

    // cancel() asks an operation's own code to stop; an import that has finished has no code left
    // to ask. Look at what remove(_:) changes besides the import's cancel flag.
    // Covers: C52, C60
    // Paths: reuse
    @Test("removing a photo that was already imported, or removing one twice, changes nothing it did")
    func removeAfterTheEndChangesNothing() async {
        let source = HeldSource()
        let reports = Reports()
        let importer = PhotoImporter(source: source, width: 1, onReport: reports.callback)
        let (imported, waiting) = ("IMG_0001", "IMG_0002")
        guard
            let jobs = await returning(
                "add(_:) of two photos", section: "Configure, then enqueue",
                { [imported, waiting].map { importer.add($0) } })
        else { return source.completeAll() }
        await waitUntil("\(imported) to start copying") { source.hasStarted(imported) }
        source.complete(imported, bytes: 3_000)
        await waitUntil(
            "the report for \(imported)", hint: lesson.see("Completion blocks report results")
        ) { reports.report(for: imported) != nil }
        await waitUntil("\(waiting) to start copying") { source.hasStarted(waiting) }

        // The imported photo is removed twice after it finished; the other one twice while it copies.
        guard
            await returning(
                "remove(_:) twice, of a finished import and of a copying one",
                section: "Cancelling is the only way out of a queue",
                { () -> Void in
                    jobs.forEach { importer.remove($0) }
                    jobs.forEach { importer.remove($0) }
                }) != nil
        else { return source.completeAll() }
        source.complete(waiting)
        await waitUntil(
            "the report for \(waiting)", hint: lesson.see("Completion blocks report results")
        ) { reports.report(for: waiting) != nil }
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { reports.log.count > 2 }
        guard
            let known = await returning(
                "outcome(of:)", section: "Keep your own references",
                { [imported, waiting].map { importer.outcome(of: $0) } })
        else { return source.completeAll() }
        let answers = zip([imported, waiting], known).map { "\($0): \($1.map { "\($0)" } ?? "nil")" }
        #expect(
            known == [.imported(bytes: 3_000), .cancelled] && jobs.map(\.outcome) == known,
            """
            \(imported) had been imported (3000 bytes) when it was removed, twice; \(waiting) was \
            removed twice while it copied. outcome(of:) then answered \(answers.joined(separator: ", ")) \
            and the imports held \(jobs.map { "\($0.outcome)" }.joined(separator: ", ")); expected \
            imported(bytes: 3000) and cancelled. remove(_:) cancels, and a cancel only asks the \
            import's own code to stop: a finished import has nothing left to stop, so what it did \
            stays what the importer knows, however often it is removed.
            \(lesson.see("Keep your own references"))
            """
        )
        #expect(
            reports.log.count == 2,
            """
            Two imports finished, so two reports were expected; they were \(reports.log.timeline). \
            Removing an import again, or after it finished, reports nothing new.
            \(lesson.see("Completion blocks report results"))
            """
        )
    }

    // A queue can cancel only the operations it holds. Look at what else cancelAll must stop
    // while importAll still has batches to add, and in which order cancelAll does its two steps.
    // Covers: C51, C57
    @Test("cancelling a batched import also drops the batches not yet added, and ends it once")
    func cancelAllStopsLaterBatches() async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 3, queue: queue)
        let names = photos(6)
        let batch = Array(names.prefix(3))
        let call = ImportAllCall(importer, names, batchSize: 3)
        await waitUntil("the first batch to start copying") { source.started.count >= 3 }

        // The first batch ends inside cancelAll(), right after the queue cancelled what it holds.
        // A feeder that has not heard of the cancel by then adds the next batch, which nothing
        // cancels; one that has heard of it (or waits at the lock cancelAll holds) adds nothing.
        queue.afterCancellingAll.withValue {
            $0 = {
                batch.forEach { source.complete($0) }
                _ = settles(within: Bound.scaled(.milliseconds(50))) {
                    queue.handOffs.count > batch.count || call.done.value
                }
            }
        }
        guard
            await returning(
                "cancelAll() while importAll feeds its batches",
                section: "Cancelling is the only way out of a queue",
                suspect:
                    " (a lock held while importAll waits for copies, such as addOperations(_:waitUntilFinished: true)?)",
                { importer.cancelAll() }
            ) != nil
        else { return source.completeAll() }
        batch.forEach { source.complete($0) }
        await waitUntil(
            "importAll to call done once the cancelled import ended",
            hint: lesson.see("Cancelling is the only way out of a queue"),
            givingUpWhen: {
                if source.started.count > 3 { return "the next batch started copying after cancelAll()" }
                if importer.queue.isSuspended { return "the queue is suspended, so the cancelled batch cannot finish" }
                return nil
            }
        ) { call.done.value }
        #expect(
            source.started.sorted() == batch,  // the batch starts in any order
            """
            After cancelAll() during the first batch, only that batch should ever have been \
            copied; copies started for \(source.started.joined(separator: ", ")). Here the batch's \
            last copy ended while cancelAll() ran, just after cancelAllOperations() returned. \
            cancelAllOperations() reaches only what the queue holds now: the feeder must hear of \
            the cancel before it could add more (tell it first, or do both under the lock it checks).
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        await call.expectDoneOnce("when cancelAll() ended the import")
        source.completeAll()
    }

    // A cancel is a request: the import goes on until its own work notices. Look at what
    // PhotoImport does when it is cancelled while its copy runs, and when it tells the queue.
    // Covers: C50, C53
    @Test(
        "a cancel that lands during a copy keeps the import executing, and its slot taken, until the copy returns",
        arguments: Cancel.allCases
    )
    func cancelDuringCopyKeepsTheSlot(_ cancel: Cancel) async {
        let source = HeldSource()
        let queue = WatchedQueue(serialStarts: true)
        let importer = PhotoImporter(source: source, width: 1, queue: queue)
        let names = photos(3)
        guard
            let jobs = await returning(
                "add(_:) of three photos", section: "Configure, then enqueue",
                {
                    names.map { importer.add($0) }
                })
        else { return source.completeAll() }
        await waitUntil("the first photo to start copying") { source.hasStarted(names[0]) }

        guard
            await returning(
                "\(cancel.rawValue) while \(names[0]) copies", section: "Cancelling is the only way out of a queue",
                {
                    switch cancel {
                    case .remove: importer.remove(jobs[0])
                    case .cancelAll: importer.cancelAll()
                    }
                }) != nil
        else { return source.completeAll() }
        await queue.settle()  // the queue has started whatever it decided to start
        let finished = jobs.filter(\.isFinished).map(\.photo)
        #expect(
            finished.isEmpty && source.started == [names[0]],
            """
            With width 1, \(cancel.rawValue) landed while \(names[0]) was copying. Before that copy \
            returned, finished: [\(finished.joined(separator: ", "))], copies started: \
            [\(source.started.joined(separator: ", "))]; expected nothing finished and no other copy. \
            A cancelled import goes on executing, and keeps its slot, until its work notices the \
            cancel (here, when the copy returns); one that finishes at once tells the queue the card \
            is free while it is still being written, and the next copy starts beside it.
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )

        source.complete(names[0])
        await waitUntil("the queue to empty") {
            source.completeAll()
            return queue.operationCount == 0
        }
        #expect(
            jobs[0].outcome == .cancelled,
            """
            \(names[0]) was cancelled with \(cancel.rawValue) while it copied; when the copy \
            returned it should have ended .cancelled, but ended \(jobs[0].outcome).
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
    }

    // cancelAll() ends the import under way, not the importer, and only this importer's. Look at
    // the mark cancelAll leaves for the feeder: does an import that begins later find it, or
    // another importer's feeder?
    // Covers: C51, C57
    // Paths: reuse, interference
    @Test("after cancelAll() the importer imports again, and cancelAll() never reached another importer")
    func importsAgainAfterCancelAll() async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 2, queue: queue)
        let otherCard = HeldSource()
        let other = PhotoImporter(source: otherCard, width: 2, queue: WatchedQueue())
        let first = ImportAllCall(importer, photos(4), batchSize: 2)
        let bystander = ImportAllCall(other, photos(4), batchSize: 2)
        defer {
            source.completeAll()
            otherCard.completeAll()
        }
        await waitUntil("both importers' first batches to start copying") {
            source.started.count >= 2 && otherCard.started.count >= 2
        }
        guard
            await returning(
                "cancelAll()", section: "Cancelling is the only way out of a queue",
                {
                    importer.cancelAll()
                }) != nil
        else { return }
        let suspended = {
            importer.queue.isSuspended ? "the queue is suspended, so the cancelled imports cannot finish" : nil
        }
        guard
            await waitUntil(
                "importAll to call done after cancelAll()", givingUpWhen: suspended,
                {
                    source.completeAll()
                    return first.done.value
                })
        else { return }

        await waitUntil(
            "another importer, which nobody cancelled, to copy all four of its photos",
            hint: """
                cancelAll() on one importer reached another one. The mark the feeder checks, like \
                the queue, belongs to one importer: keep it in the instance, never in a static or \
                a global.
                \(lesson.see("Cancelling is the only way out of a queue"))
                """,
            givingUpWhen: {
                bystander.done.value && otherCard.started.count < 4
                    ? "it called done having copied only \(otherCard.started.joined(separator: ", "))"
                    : nil
            }
        ) {
            otherCard.completeAll()
            return bystander.done.value && otherCard.started.count == 4
        }

        let later = photos(3, from: 11)
        let second = ImportAllCall(importer, later, batchSize: 2)
        let added = await returning("add(_:) after cancelAll()", section: "Configure, then enqueue") {
            importer.add("IMG_0020")
        }
        let wanted = later + ["IMG_0020"]
        await waitUntil(
            "every photo asked for after cancelAll() to be copied",
            hint: lesson.see("Cancelling is the only way out of a queue"),
            givingUpWhen: {
                second.done.value && !later.allSatisfy(source.hasStarted)
                    ? "the later importAll called done having copied only \(later.filter(source.hasStarted))"
                    : nil
            }
        ) {
            source.completeAll()
            return second.done.value && added?.isFinished == true
        }
        guard
            let known = await returning(
                "outcome(of:)", section: "Keep your own references",
                {
                    wanted.map { importer.outcome(of: $0) }
                })
        else { return source.completeAll() }
        let outcomes = zip(wanted, known).map { photo, outcome in
            "\(photo): \(outcome.map { "\($0)" } ?? "nil")"
        }
        #expect(
            known.allSatisfy { $0 == .imported(bytes: 1_000) },
            """
            After a cancelAll() that had ended the import under way, the importer was asked for more: \
            \(outcomes.joined(separator: ", ")); expected every one imported. cancelAll() stops what \
            the queue holds and the batches not yet added at that moment, not every import to come: \
            a mark that stays set for good turns the importer off.
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        await second.expectDoneOnce("for an import that ran to its end")
        queue.letGo()
    }

    // A new import may begin while a cancelled one still has copies running. Look at what the
    // mark cancelAll leaves belongs to: one importAll call, or the importer, which the next
    // importAll may clear before the cancelled call's feeder has looked at it.
    // Covers: C51, C57
    // Paths: reuse
    @Test("an importAll begun right after cancelAll(), while the cancelled batch still copies, does not revive it")
    func importAllRightAfterCancelAll() async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 2, queue: queue)
        let names = photos(4)
        let later = photos(2, from: 11)
        let first = ImportAllCall(importer, names, batchSize: 2)
        defer { source.completeAll() }
        await waitUntil("the first batch to start copying") { source.started.count >= 2 }
        guard
            await returning(
                "cancelAll()", section: "Cancelling is the only way out of a queue", { importer.cancelAll() }) != nil
        else { return }
        // A new import begins before the cancelled batch's copies have returned.
        let second = ImportAllCall(importer, later, batchSize: 2)
        await waitUntil("the new importAll to hand over its first batch") {
            queue.handOffs.all.contains { $0.photo == later[0] }
        }
        await waitUntil(
            "both importAll calls to call done",
            hint: lesson.see("Cancelling is the only way out of a queue"),
            givingUpWhen: {
                importer.queue.isSuspended ? "the queue is suspended, so the cancelled imports cannot finish" : nil
            }
        ) {
            source.completeAll()
            return first.done.value && second.done.value
        }
        let revived = names.dropFirst(2).filter(source.hasStarted)
        #expect(
            revived.isEmpty,
            """
            importAll was cancelled during its first batch, and a new importAll began before that \
            batch's copies returned; the cancelled call then went on with \
            \(revived.joined(separator: ", ")). The new import cleared the mark the cancelled \
            feeder had not looked at yet. The mark belongs to the call it stopped (or count the \
            cancels, and let each call compare with the count when it began): a new import never \
            undoes an earlier cancel.
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        #expect(
            later.allSatisfy(source.hasStarted),
            """
            The importAll that began after cancelAll() should copy its photos; copies started: \
            \(source.started.joined(separator: ", ")).
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        await first.expectDoneOnce("when cancelAll() ended the import")
        await second.expectDoneOnce("for an import that ran to its end")
        queue.letGo()
    }

    // The feeder checks the cancel mark and then hands the next batch over. Look at what holds
    // a cancelAll() back between those two steps: a cancel that lands between them finds neither
    // the mark unread nor the batch in the queue.
    // Covers: C51, C57
    @Test("a cancelAll() that lands while the feeder hands over its next batch cancels that batch too")
    func cancelAllDuringAHandOff() async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 2, queue: queue)
        let names = photos(4)
        let call = ImportAllCall(importer, names, batchSize: 2)
        defer { source.completeAll() }
        await waitUntil("the first batch to start copying") { source.started.count >= 2 }

        // Right before the second batch reaches the queue, another thread cancels everything and
        // gets a short while to return. A feeder that still holds the lock cancelAll() needs keeps
        // it waiting; one that checked the mark and let go of the lock lets it through.
        let cancelReturned = Protected(false)
        queue.beforeHandingOver.withValue {
            $0 = { photos in
                guard photos.contains(names[2]) else { return }
                queue.beforeHandingOver.withValue { $0 = nil }
                Thread.detachNewThread {
                    importer.cancelAll()
                    cancelReturned.withValue { $0 = true }
                }
                _ = settles(within: Bound.scaled(.milliseconds(50))) { cancelReturned.value }
            }
        }
        source.complete(names[0])
        source.complete(names[1])
        // No copy of the second batch ends before cancelAll() has returned.
        guard
            await waitUntil(
                "cancelAll(), called while the second batch was handed over, to return",
                hint: lesson.see("Cancelling is the only way out of a queue"),
                givingUpWhen: {
                    // The hook removes itself when it runs: a second batch in the queue while it is
                    // still set was handed over before the first batch's copies ended.
                    queue.beforeHandingOver.value != nil && queue.handOffs.all.contains { $0.photo == names[2] }
                        ? """
                        importAll handed \(names[2]) to the queue while the first batch's copies \
                        were still running; a batch goes in only once the one before it is done
                        """ : nil
                },
                { cancelReturned.value })
        else { return }
        await waitUntil(
            "importAll to call done once cancelAll() ended the import",
            hint: lesson.see("Cancelling is the only way out of a queue"),
            givingUpWhen: {
                importer.queue.isSuspended ? "the queue is suspended, so the cancelled imports cannot finish" : nil
            }
        ) {
            source.completeAll()
            return call.done.value
        }
        let uncancelled = names.dropFirst(2).compactMap { queue.handedImport($0) }
            .filter { $0.outcome != .cancelled }
        let ran = uncancelled.map { "\($0.photo): \($0.outcome)" }.joined(separator: ", ")
        #expect(
            uncancelled.isEmpty,
            """
            cancelAll() ran while importAll handed over its second batch, and returned before that \
            batch reached the queue: \(ran) \
            then ran as if nothing had been cancelled. The feeder checked the mark and only then \
            handed the batch over, with nothing holding the cancel back in between. Check the mark \
            and hand the batch over under the lock cancelAll() takes, so that a cancel comes either \
            before the check or after the batch is in the queue.
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        await call.expectDoneOnce("when cancelAll() ended the import")
        queue.letGo()
    }
}
