import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("A queue's width bounds how many imports run at once", .watched)
struct WidthSpecs {
    // maxConcurrentOperationCount is the limit; without it a queue runs as many operations as the
    // system likes. Look at how PhotoImporter's init prepares its queue.
    // Covers: C53
    @Test("no more photos copy at the same time than the importer's width", arguments: [1, 2, 3])
    func widthIsAHardLimit(_ width: Int) async {
        let source = HeldSource()
        // Every import starts on one serial dispatch queue, so settle() knows when the queue has
        // run every start it decided on.
        let queue = WatchedQueue(serialStarts: true)
        let importer = PhotoImporter(source: source, width: width, queue: queue)
        let names = photos(6)
        names.forEach { importer.add($0) }

        await waitUntil("\(width) photo(s) to start copying") { source.started.count >= width }
        await queue.settle()
        #expect(
            source.started.count <= width,
            """
            With width \(width), at most \(width) copies may run at once; \
            \(source.running.count) were running together (\(source.running.joined(separator: ", "))). \
            The queue's maxConcurrentOperationCount is what limits them.
            \(lesson.see("A queue's width is a hard limit"))
            """
        )

        await waitUntil("all six photos to be copied") {
            source.completeAll()
            return importer.queue.operationCount == 0
        }
        #expect(
            source.peak <= width,
            """
            With width \(width), at most \(width) copies may run at once; the peak was \(source.peak).
            \(lesson.see("A queue's width is a hard limit"))
            """
        )
    }
}
