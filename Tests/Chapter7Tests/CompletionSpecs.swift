import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("A completion block reports results read from the finished operation, on the main queue", .watched)
struct CompletionSpecs {
    // The completion block runs after the operation finishes and receives nothing. Look at when
    // PhotoImporter reads the outcome it reports.
    // Covers: C56
    // Paths: interference
    @Test("each report carries the photo's outcome, known only once the copy is done")
    func reportsCarryTheOutcome() async {
        let source = HeldSource()
        let reports = Reports()
        let importer = PhotoImporter(source: source, width: 2, onReport: reports.callback)
        guard
            await returning(
                "add(_:) of two photos", section: "Configure, then enqueue",
                { () -> Void in
                    _ = importer.add("IMG_0001")
                    _ = importer.add("IMG_0002")
                }) != nil
        else { return source.completeAll() }
        await waitUntil("both photos to start copying") { source.started.count == 2 }

        source.complete("IMG_0001", bytes: 1_234)
        source.complete("IMG_0002", bytes: 5_678)
        await waitUntil(
            "a report for each of the two photos",
            hint: lesson.see("Completion blocks report results")
        ) { reports.log.count >= 2 }

        let got = [reports.report(for: "IMG_0001")?.outcome, reports.report(for: "IMG_0002")?.outcome]
        #expect(
            got == [.imported(bytes: 1_234), .imported(bytes: 5_678)],
            """
            The reports said \(reports.log.timeline); expected IMG_0001: imported 1234 bytes and \
            IMG_0002: imported 5678 bytes. A completion block takes no arguments and runs after \
            the copy: read job.outcome inside it, not before.
            \(lesson.see("Completion blocks report results"))
            """
        )
    }

    // OperationQueue.main runs its operations on the main queue; a completion block runs wherever
    // the system likes. Look at how the completion block hands the report over.
    // Covers: C59, C58
    @Test("reports arrive on the main queue, and each import runs on the importer's queue")
    func reportsArriveOnTheMainQueue() async {
        let source = HeldSource()
        let reports = Reports()
        let importer = PhotoImporter(source: source, width: 1, onReport: reports.callback)
        guard await returning("add(_:)", section: "Configure, then enqueue", { importer.add("IMG_0001") }) != nil
        else { return source.completeAll() }
        await waitUntil("the photo to start copying") { source.hasStarted("IMG_0001") }
        #expect(
            source.wasStarted("IMG_0001", on: importer.queue),
            """
            Inside the import, OperationQueue.current should be the importer's queue, the one \
            running it.
            \(lesson.see("Which queue am I on?"))
            """
        )
        source.complete("IMG_0001")
        await waitUntil(
            "the report for IMG_0001",
            hint: lesson.see("Which queue am I on?")
        ) { reports.log.count >= 1 }

        let report = reports.log.all.first
        #expect(
            report?.onMainQueue == true,
            """
            The report ran off the main queue. A completion block runs on a thread of the \
            system's choosing: hand the report to the main queue (OperationQueue.main or \
            DispatchQueue.main both do).
            \(lesson.see("Which queue am I on?"))
            """
        )
    }
}
