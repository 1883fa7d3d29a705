import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Suspending a queue stops new starts but lets running work finish")
struct SuspensionSpecs {
    // isSuspended = true only keeps waiting operations from starting; copies already running go
    // on. The card is safe to eject once those have finished, not before.
    // Covers: C54
    @Test("the card is ready to eject only after the running copies finish, and nothing new starts")
    func ejectWaitsForRunningCopies() async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: 2)
        let names = photos(4)
        let jobs = names.map { importer.add($0) }
        await waitUntil("two photos to start copying") { source.started.count >= 2 }
        let running = source.running

        let ready = Protected(false)
        importer.pauseForEject { ready.withValue { $0 = true } }
        let readyTooSoon = await comesTrue(within: .milliseconds(300)) { ready.value }
        #expect(
            !readyTooSoon,
            """
            pauseForEject said the card was ready while \(running.joined(separator: " and ")) were \
            still copying. Suspending a queue does not pause operations that are executing: wait \
            for them to finish before calling ready.
            \(lesson.see("Suspending stops starts, not work"))
            """
        )

        running.forEach { source.complete($0, bytes: 500) }
        await waitUntil(
            "the card to be ready once the running copies finished",
            hint: lesson.see("Suspending stops starts, not work")
        ) { ready.value }
        #expect(
            source.started.count == 2,
            """
            While the import was paused for ejecting, new copies started: \
            \(source.started.joined(separator: ", ")). Suspend the queue so that waiting photos \
            stay waiting.
            \(lesson.see("Suspending stops starts, not work"))
            """
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

        importer.resume()
        await waitUntil("the rest of the photos to import after resume()") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }
    }
}
