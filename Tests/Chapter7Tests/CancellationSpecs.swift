import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Cancelling is the only way to take work back from a queue", .watched)
struct CancellationSpecs {
    // cancelAllOperations marks every import cancelled; the queue then starts each one. Look at
    // cancelAll, and at what PhotoImport.start() and the end of a copy do with isCancelled.
    // Covers: C50, C51
    @Test("cancelling the whole import skips every waiting photo, and the queue still drains")
    func cancelAllDrainsTheQueue() async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: 1)
        let names = photos(5)
        let jobs = names.map { importer.add($0) }
        await waitUntil("the first photo to start copying") { source.hasStarted(names[0]) }

        importer.cancelAll()
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
    // to the import itself.
    // Covers: C52
    @Test("removing a waiting photo cancels it: it is never copied and the queue empties")
    func removeCancels() async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: 1)
        let names = photos(3)
        let jobs = names.map { importer.add($0) }
        await waitUntil("the first photo to start copying") { source.hasStarted(names[0]) }

        importer.remove(jobs[1])
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
    }

    // A queue can cancel only the operations it holds. Look at what else cancelAll must stop
    // while importAll still has batches to add.
    // Covers: C51, C57
    @Test("cancelling a batched import also drops the batches not yet added, and ends it")
    func cancelAllStopsLaterBatches() async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: 3)
        let names = photos(6)
        let call = ImportAllCall(importer, names, batchSize: 3)
        await waitUntil("the first batch to start copying") { source.started.count >= 3 }

        // Called on a thread of its own: an importer that holds its lock while importAll
        // blocks would otherwise hold up every other spec of the run too.
        let cancelled: Void? = await callOnItsOwnThread(
            "cancelAll() while importAll feeds its batches",
            hint: """
                cancelAll() is stuck: something in the importer holds a lock while it waits for \
                copies (addOperations(_:waitUntilFinished: true) inside importAll?).
                \(lesson.see("Cancelling is the only way out of a queue"))
                """
        ) { importer.cancelAll() }
        guard cancelled != nil else { return source.completeAll() }
        names.prefix(3).forEach { source.complete($0) }
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
            source.started.sorted() == Array(names.prefix(3)),  // the batch starts in any order
            """
            After cancelAll() during the first batch, only that batch should ever have been \
            copied; copies started for \(source.started.joined(separator: ", ")). \
            cancelAllOperations() reaches only what the queue holds now: batches importAll has \
            not added yet must be dropped too.
            \(lesson.see("Cancelling is the only way out of a queue"))
            """
        )
        source.completeAll()
    }
}
