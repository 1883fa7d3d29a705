import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("An importer keeps its own references to the imports whose results it needs")
struct ReferenceSpecs {
    // A queue lets go of an operation as soon as it finishes, so queue.operations cannot find it
    // afterwards. Keep your own reference (a dictionary by photo) to read the outcome later.
    // Covers: C60
    @Test("the outcome of a photo is still known after the queue has let go of its import")
    func outcomeOutlivesTheQueue() async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: 1)
        importer.add("IMG_0001")
        await waitUntil("the photo to start copying") { source.hasStarted("IMG_0001") }
        source.complete("IMG_0001", bytes: 4_096)
        await waitUntil("the queue to let go of the finished import") {
            importer.queue.operationCount == 0
        }

        let outcome = importer.outcome(of: "IMG_0001")
        #expect(
            outcome == .imported(bytes: 4_096),
            """
            outcome(of: "IMG_0001") returned \(outcome.map { "\($0)" } ?? "nil") after the import \
            finished; expected imported(bytes: 4096). The queue no longer lists a finished \
            operation: keep your own reference to each import.
            \(lesson.see("Keep your own references"))
            """
        )
    }
}
