import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("An importer keeps its own references to the imports whose results it needs", .watched)
struct ReferenceSpecs {
    // A queue lets go of an operation as soon as it finishes, so queue.operations cannot find it
    // afterwards. Look at where outcome(of:) searches, for photos from add and from importAll.
    // Covers: C60
    // Paths: collaborators
    @Test(
        "the outcome of a photo is known while it copies and after the queue let go of it",
        arguments: ConfigurationSpecs.Entry.allCases
    )
    func outcomeOutlivesTheQueue(_ entry: ConfigurationSpecs.Entry) async {
        let source = HeldSource()
        let reports = Reports()
        let importer = PhotoImporter(source: source, width: 1, onReport: reports.callback)
        switch entry {
        case .add:
            guard await returning("add(_:)", section: "Configure, then enqueue", { importer.add("IMG_0001") }) != nil
            else { return source.completeAll() }
        case .importAll: _ = ImportAllCall(importer, ["IMG_0001"], batchSize: 1)
        }
        await waitUntil("the photo to start copying") { source.hasStarted("IMG_0001") }
        let whileCopying = await returning("outcome(of:)", section: "Keep your own references") {
            importer.outcome(of: "IMG_0001")
        }.flatMap { $0 }
        #expect(
            whileCopying == .pending,
            """
            Through \(entry.rawValue): while IMG_0001 was copying, outcome(of:) returned \
            \(whileCopying.map { "\($0)" } ?? "nil"); expected pending.
            \(lesson.see("Keep your own references"))
            """
        )

        source.complete("IMG_0001", bytes: 4_096)
        await waitUntil("the queue to let go of the finished import and report it") {
            importer.queue.operationCount == 0 && reports.report(for: "IMG_0001") != nil
        }
        let outcome = await returning("outcome(of:)", section: "Keep your own references") {
            importer.outcome(of: "IMG_0001")
        }.flatMap { $0 }
        #expect(
            outcome == .imported(bytes: 4_096),
            """
            Through \(entry.rawValue): outcome(of: "IMG_0001") returned \
            \(outcome.map { "\($0)" } ?? "nil") after the import finished; expected \
            imported(bytes: 4096). The queue no longer lists a finished operation: keep your own \
            reference to each import.
            \(lesson.see("Keep your own references"))
            """
        )
    }
}
