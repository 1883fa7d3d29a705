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

@Suite("A large import feeds the queue in batches instead of flooding it")
struct BatchSpecs {
    // Adding a thousand operations at once costs memory and gains nothing: add one batch, and
    // add the next only when that batch has finished.
    // Covers: C57, C58
    @Test(
        "importing 1,000 photos never leaves more unfinished imports in the queue than one batch",
        arguments: [10, 25]
    )
    func feedsInBatches(batchSize: Int) async {
        let source = CountingSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 4, queue: queue)
        let done = Protected(false)
        let copiesAtDone = Protected(-1)
        importer.importAll(photos(1_000), batchSize: batchSize) {
            copiesAtDone.withValue { $0 = source.copies.value }
            done.withValue { $0 = true }
        }
        await waitUntil(
            "importAll to call done after 1,000 photos",
            hint: lesson.see("Feed a queue in batches")
        ) { done.value }

        #expect(
            queue.peakUnfinished <= batchSize,
            """
            With batches of \(batchSize), the queue should never hold more than \(batchSize) \
            unfinished imports; right after one hand-off it held \(queue.peakUnfinished). Add the \
            next batch only when the current one has finished (a dependency or a completion \
            block tells you).
            \(lesson.see("Feed a queue in batches"))
            """
        )
        #expect(
            copiesAtDone.value == 1_000,
            """
            importAll should call done after all 1,000 photos were copied; it did so after \
            \(copiesAtDone.value).
            \(lesson.see("Feed a queue in batches"))
            """
        )
    }
}
