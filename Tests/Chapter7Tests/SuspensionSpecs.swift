import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Suspending a queue stops new starts but lets running work finish", .watched)
struct SuspensionSpecs {
    // isSuspended = true only keeps waiting operations from starting; copies already running go
    // on. Look at pauseForEject: when may it call ready?
    // Covers: C54
    @Test("the card is ready to eject only after the running copies finish, and nothing new starts")
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
        importer.pauseForEject {
            events.record("ready")
            ready.withValue { $0 = true }
        }
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

        importer.resume()
        await waitUntil("the rest of the photos to import after resume()") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }
    }
}
