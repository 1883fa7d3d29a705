import Chapter12
import Foundation
import KataTestSupport
import Testing

extension Chapter12Specs {
    @Suite("The pipeline keeps nothing it no longer needs")
    struct MemorySpecs {
        // Once a row has its thumbnail, what in `ImagePipeline` still holds its operations, its
        // callback (and the cell it captured) or its bitmaps? Lesson: "Nothing kept" and Chapter 9.
        // Covers: C93, C60, C65, C66
        // Paths: memory
        @Test("once rows got their thumbnails, no cell, bitmap or thumbnail stays in memory")
        func deliveredRowsKeepNothing() async {
            let studio = Studio()
            let pipeline = ImagePipeline(fetcher: studio, decoder: studio, resizer: studio)
            let list = ListView(pipeline)
            for (row, image) in ["beach", "forest"].enumerated() { await list.show(image, in: row) }
            guard await waitUntil("both rows to get their thumbnails", { list.deliveries.count == 2 }) else { return }
            await MainQueue.drain()
            let freed = await comesTrue(within: patience) {
                studio.bitmapsInMemory.isEmpty && list.cellsInMemory.isEmpty && studio.operationsInMemory.isEmpty
            }
            #expect(
                freed,
                """
                Both rows got their thumbnails and the list let go of them, yet \(patience.seconds) s later \
                these were still in memory: \(list.cellsInMemory + studio.bitmapsInMemory + studio.operationsInMemory). \
                Something in the pipeline still holds them: a list of finished operations, a completion \
                block that captures its operation, a stage that keeps its input.
                \(lesson.see("Nothing kept"))
                """)
            withExtendedLifetime(pipeline) {}
        }

        // Once a row has left the screen, what in `ImagePipeline` still holds its callback and the
        // cell it captured? Lesson: "Nothing kept".
        // Covers: C93, C89
        // Paths: memory
        @Test("rows that left the screen, fetching or waiting, leave nothing in memory")
        func rowsThatLeftKeepNothing() async {
            let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
            let studio = Studio(holding: [.fetch], widths: widths)
            defer { studio.releaseAll() }
            let pipeline = ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths)
            let list = ListView(pipeline)
            await list.show("running", in: 0)
            await list.show("waiting", in: 1)
            guard await waitUntil("the fetch of row 0 to begin", { studio.saw("running fetch began") }) else { return }
            // The waiting row first: once row 0's fetch ends, row 1's may start at once.
            await list.scrollAway(1, 0)
            let freed = await comesTrue(within: patience) { list.cellsInMemory.isEmpty }
            #expect(
                freed,
                """
                Rows 0 and 1 left the screen, yet \(patience.seconds) s later these were still in memory: \
                \(list.cellsInMemory). A row that left keeps nothing alive: not its callback, not its \
                operations.
                \(lesson.see("Nothing kept"))
                """)
            withExtendedLifetime(pipeline) {}
        }
    }
}
