import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("A queue's width bounds how many imports run at once")
struct WidthSpecs {
    // maxConcurrentOperationCount is the limit; without it a queue runs as many operations as the
    // system likes. Set it on the queue in init.
    // Covers: C53
    @Test("no more photos copy at the same time than the importer's width", arguments: [1, 2, 3])
    func widthIsAHardLimit(_ width: Int) async {
        let source = HeldSource()
        let importer = PhotoImporter(source: source, width: width)
        let names = photos(6)
        names.forEach { importer.add($0) }

        await waitUntil("\(width) photo(s) to start copying") { source.started.count >= width }
        let overflow = await comesTrue(within: .milliseconds(300)) { source.started.count > width }
        #expect(
            !overflow,
            """
            With width \(width), at most \(width) copies may run at once; \
            \(source.running.count) were running together (\(source.running.joined(separator: ", "))). \
            Set queue.maxConcurrentOperationCount to the width.
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
