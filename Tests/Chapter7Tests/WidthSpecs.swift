import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("A queue's width bounds how many imports run at once", .watched)
struct WidthSpecs {
    // maxConcurrentOperationCount is the limit; without it a queue runs as many operations as the
    // system likes. Look at how PhotoImporter prepares its queue, for add and importAll alike.
    // Covers: C53
    // Paths: values
    @Test(
        "no more photos copy at the same time than the importer's width, through add and importAll",
        arguments: ConfigurationSpecs.Entry.allCases, [1, 2, 3, 8, 12]
    )
    func widthIsAHardLimit(_ entry: ConfigurationSpecs.Entry, _ width: Int) async {
        let source = HeldSource()
        // Every import starts on one serial dispatch queue, so settle() knows when the queue has
        // run every start it decided on.
        let queue = WatchedQueue(serialStarts: true)
        let importer = PhotoImporter(source: source, width: width, queue: queue)
        // More photos than the width, whatever the width: a cap shows as one copy too many.
        let names = photos(max(6, width + 4))
        var call: ImportAllCall?
        switch entry {
        case .add:
            guard
                await returning(
                    "add(_:) of \(names.count) photos", section: "Configure, then enqueue",
                    {
                        names.forEach { importer.add($0) }
                    }) != nil
            else { return source.completeAll() }
        case .importAll: call = ImportAllCall(importer, names, batchSize: names.count)
        }
        let expected = min(width, names.count)

        await waitUntil("\(expected) photo(s) to start copying through \(entry.rawValue)") {
            source.started.count >= expected
        }
        await queue.settle()
        #expect(
            source.started.count <= width,
            """
            Through \(entry.rawValue) with width \(width), at most \(width) copies may run at once; \
            \(source.running.count) were running together (\(source.running.joined(separator: ", "))). \
            The queue's maxConcurrentOperationCount is what limits them, whichever method queued \
            the work: set it once, before any import reaches the queue.
            \(lesson.see("A queue's width is a hard limit"))
            """
        )

        await waitUntil("all \(names.count) photos to be copied") {
            source.completeAll()
            return importer.queue.operationCount == 0 && (call?.done.value ?? true)
        }
        #expect(
            source.peak <= width,
            """
            Through \(entry.rawValue) with width \(width), at most \(width) copies may run at once; \
            the peak was \(source.peak).
            \(lesson.see("A queue's width is a hard limit"))
            """
        )
    }
}
