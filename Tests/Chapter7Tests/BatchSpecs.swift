import Chapter7
import Foundation
import KataTestSupport
import Testing

/// A camera card that completes every copy at once and counts them.
final class CountingSource: PhotoSource {
    let copies = Protected(0)

    func copy(_ photo: String, done: @escaping @Sendable (Int) -> Void) {
        copies.withValue { $0 += 1 }
        done(photo.utf8.count)
    }
}

@Suite("A large import feeds the queue in batches instead of flooding it", .watched)
struct BatchSpecs {
    // Adding hundreds of operations at once costs memory and gains nothing. Look at how many
    // imports importAll hands the queue before any of them has finished.
    // Covers: C57, C58
    // Paths: values
    @Test(
        "a large import never leaves more unfinished imports in the queue than one batch; an empty one just ends",
        arguments: [(1, 30), (10, 120), (25, 120), (500, 120), (10, 0)]
    )
    func feedsInBatches(batchSize: Int, count: Int) async {
        let source = CountingSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 4, queue: queue)
        let done = Protected(false)
        let doneCalls = Protected(0)
        let copiesAtDone = Protected(-1)
        Thread.detachNewThread {
            importer.importAll(photos(count), batchSize: batchSize) {
                doneCalls.withValue { $0 += 1 }
                copiesAtDone.withValue { $0 = source.copies.value }
                done.withValue { $0 = true }
            }
        }
        await waitUntil(
            "importAll to call done after \(count) photos",
            hint: lesson.see("Feed a queue in batches")
        ) { done.value }

        #expect(
            queue.peakUnfinished <= batchSize,
            """
            With batches of \(batchSize), the queue should never hold more than \(batchSize) \
            unfinished imports; right after one hand-off it held \(queue.peakUnfinished). Add the \
            next batch only when the current one has finished.
            \(lesson.see("Feed a queue in batches"))
            """
        )
        #expect(
            copiesAtDone.value == count,
            """
            importAll should call done after all \(count) photos were copied; it did so after \
            \(copiesAtDone.value).
            \(lesson.see("Feed a queue in batches"))
            """
        )
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { doneCalls.value > 1 }
        #expect(
            doneCalls.value == 1,
            """
            importAll should call done once, after the last batch; it called it \(doneCalls.value) \
            times for \(count) photos in batches of \(batchSize).
            \(lesson.see("Feed a queue in batches"))
            """
        )
        // One import per photo is the unit of work; bookkeeping may cost an operation per batch,
        // not one per photo.
        let allowed = count + (count + batchSize - 1) / batchSize + 1
        let added = queue.operationsAdded.value
        #expect(
            added <= allowed,
            """
            For \(count) photos in batches of \(batchSize), the import queue received \(added) \
            operations. Each operation should be worth its overhead: one import per photo, and at \
            most one helper per batch.
            \(lesson.see("Feed a queue in batches"))
            """
        )
    }

    // A batch is done when every one of its imports has finished, in whatever order they end.
    // Look at what the next batch waits for in importAll, and whether importAll itself waits.
    // Covers: C57, C58
    @Test("the next batch is added only after every photo of the current batch finished")
    func nextBatchWaitsForTheWholeBatch() async {
        let events = Recorder<String>()
        let source = HeldSource(events: events)
        let reports = Reports()
        let queue = WatchedQueue(log: events)
        let importer = PhotoImporter(source: source, width: 3, queue: queue, onReport: reports.callback)
        let names = photos(6)
        let call = ImportAllCall(importer, names, batchSize: 3)
        await waitUntil("the first batch to start copying") { source.started.count >= 3 }
        await waitUntil(
            "importAll to return while its first batch was still copying",
            hint: """
                importAll hands work to the queue and returns; waiting for a batch belongs to the \
                queue (addOperations(_:waitUntilFinished: false)).
                \(lesson.see("Configure, then enqueue"))
                """
        ) { call.returned.value }

        // The batch ends out of order, last photo first; each report arrives before the next
        // copy ends, so a next batch started too early has long been handed over.
        for photo in [names[2], names[0], names[1]] {
            source.complete(photo)
            await waitUntil(
                "the report for \(photo)",
                hint: lesson.see("Completion blocks report results")
            ) { reports.report(for: photo) != nil }
        }
        await waitUntil("the second batch to start copying") { source.started.count >= 6 }
        #expect(
            events.recorded("\(names[1]) completed", before: "\(names[3]) handed to the queue"),
            """
            \(names[3]) was handed to the queue before every photo of the first batch had \
            finished. The next batch waits for the whole batch, whichever photo ends last.
            Observed: \(events.timeline)
            \(lesson.see("Feed a queue in batches"))
            """
        )

        await waitUntil("importAll to call done after the second batch") {
            source.completeAll()
            return call.done.value
        }
        await call.expectDoneOnce("after its last batch")
    }

    // importAll may be called again while an earlier call still feeds its batches. Look at where
    // importAll keeps the photos it has yet to add and the done it calls at the end: in the
    // importer, which both calls share, or with the call itself.
    // Covers: C57
    // Paths: interference
    @Test("two importAll calls at once on one importer each call their own done once, after their own photos")
    func twoImportAllsAtOnce() async {
        let events = Recorder<String>()
        let source = HeldSource(events: events)
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 2, queue: queue)
        let calls = [("first", photos(4)), ("second", photos(4, from: 101))]
        let returned = Protected(0)
        for (call, names) in calls {
            Thread.detachNewThread {
                importer.importAll(names, batchSize: 2) { events.record("\(call) done") }
                returned.withValue { $0 += 1 }
            }
        }
        defer { source.completeAll() }
        func doneCalls(_ call: String) -> Int { events.all.filter { $0 == "\(call) done" }.count }
        guard
            await waitUntil(
                "both importAll calls to return",
                hint: """
                    importAll hands work to the queue and returns.
                    \(lesson.see("Configure, then enqueue"))
                    """,
                { returned.value == 2 })
        else { return }
        await waitUntil(
            "each importAll call to call its done",
            hint: lesson.see("Feed a queue in batches"),
            givingUpWhen: {
                let twice = calls.map(\.0).filter { doneCalls($0) > 1 }
                return twice.isEmpty ? nil : "the \(twice.joined(separator: " and ")) call's done came twice"
            }
        ) {
            source.completeAll()
            return calls.allSatisfy { doneCalls($0.0) > 0 }
        }
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { calls.contains { doneCalls($0.0) > 1 } }
        for (call, names) in calls {
            let early = names.filter { !events.recorded("\($0) completed", before: "\(call) done") }
            #expect(
                doneCalls(call) == 1 && early.isEmpty,
                """
                Two importAll calls ran at once on one importer. The \(call) call's done came \
                \(doneCalls(call)) times\(early.isEmpty ? "" : ", before \(early.joined(separator: ", ")) had been copied"); \
                expected once, after its own four photos. Each call has its own photos and its own \
                done: kept in the importer, a second call overwrites what the first one still needs.
                Observed: \(events.timeline)
                \(lesson.see("Feed a queue in batches"))
                """
            )
        }
        #expect(
            queue.peakUnfinished <= 4,
            """
            Two importAll calls in batches of 2 ran at once, so the queue should never hold more \
            than one batch of each, 4 unfinished imports; right after one hand-off it held \
            \(queue.peakUnfinished). Each call adds its next batch only when its current one has finished.
            \(lesson.see("Feed a queue in batches"))
            """
        )
        queue.letGo()
    }
}
