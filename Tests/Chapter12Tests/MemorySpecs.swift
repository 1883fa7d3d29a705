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

        // Once a row has left the screen, what in `ImagePipeline` still holds its callback, the
        // cell it captured, and its fetch operations (a completion block that keeps its own fetch)?
        // Lesson: "Nothing kept".
        // Covers: C93, C89
        // Paths: memory
        @Test("rows that left the screen, fetching or waiting, leave nothing in memory, not even their fetches")
        func rowsThatLeftKeepNothing() async {
            let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
            let studio = Studio(holding: [.fetch], widths: widths)
            defer { studio.releaseAll() }
            guard let fetcher = await Self.rowsLeaveWhileFetching(studio, widths: widths) else { return }
            // The list and the pipeline are gone now; every fetch operation held the fetcher.
            let fetchesFreed = await comesTrue(within: patience) { fetcher.value == nil }
            #expect(
                fetchesFreed,
                """
                Rows 0 and 1 left the screen while one fetched and one waited to, the download ended \
                cancelled, and the list let go of the pipeline; yet \(patience.seconds) s later the \
                fetcher the pipeline was given was still in memory, so something still holds a fetch \
                operation (each holds its fetcher) or the pipeline itself: most often a completion block \
                that captures its own fetch and clears itself only when the fetch is still the row's \
                current stage. Linux never clears a completion block; every path through it must let go.
                \(lesson.see("Nothing kept"))
                """)
        }

        // Once rows were answered after a raise and after an error, what in `ImagePipeline` still
        // holds the fetch a raise replaced, or the request that failed (and through either, the
        // pipeline itself)? Lesson: "Nothing kept", "Visible rows first" and "Errors end the row".
        // Covers: C93, C87, C88
        // Paths: memory, collaborators
        @Test(
            "rows answered after a raise or an error leave nothing once the list lets go of the pipeline, not even the fetch the raise replaced",
            .preflightScrolling)
        func raisedAndFailedRowsKeepNothing() async {
            let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
            let studio = Studio(holdingFetchesOf: ["first"], failing: ["broken": .fetch], widths: widths)
            defer { studio.releaseAll() }
            guard let fetcher = await Self.rowsRaisedAndFailed(studio, widths: widths) else { return }
            // The list and the pipeline are gone now; every fetch operation held the fetcher.
            let fetchesFreed = await comesTrue(within: patience) { fetcher.value == nil }
            #expect(
                fetchesFreed,
                """
                Row 7 was prefetched, then scrolled into view while its fetch waited, row 8's fetch \
                failed, every row was answered, and the list let go of the pipeline; yet \
                \(patience.seconds) s later the fetcher the pipeline was given was still in memory, so \
                something still holds a fetch operation (each holds its fetcher) or the pipeline \
                itself: most often a list of the stages a raise replaced, or a failed request left in \
                the pipeline's table, whose stage or request leads back to the pipeline. A replaced \
                stage and an answered request are let go like any other.
                \(lesson.see("Nothing kept"))
                """)
        }

        /// Shows row 0 (its download held), row 7 (prefetched, then scrolled into view while its
        /// fetch waits) and row 8 (prefetched; its fetch fails), lets every row be answered, and
        /// returns a weak reference to the fetcher the pipeline was given, or nil (with an issue
        /// recorded) if the rows were not answered.
        private static func rowsRaisedAndFailed(
            _ studio: Studio, widths: StageWidths
        ) async -> WeakReference<FetcherOfTheStudio>? {
            let own = FetcherOfTheStudio(studio)
            let list = ListView(ImagePipeline(fetcher: own, decoder: studio, resizer: studio, widths: widths))
            await list.show("first", in: 0)
            guard await waitUntil("the fetch of row 0 to begin", { studio.saw("first fetch began") }) else {
                return nil
            }
            await list.show("soon", in: 7, visible: false)
            await list.show("broken", in: 8, visible: false)
            await list.scrollIntoView(7)
            studio.release("first")
            guard
                await waitUntil(
                    "rows 0, 7 and 8 to be answered", timeout: patience,
                    hint: "The list got \(list.deliveries.timeline); the studio saw \(studio.events.timeline).",
                    { list.deliveries.count == 3 })
            else { return nil }
            _ = await comesTrue(within: window) { studio.running(.fetch).isEmpty && list.deliveries.count == 3 }
            await MainQueue.drain()
            return WeakReference(own)
        }

        /// Shows rows 0 (its download held) and 1 (waiting for the fetch slot), and sends both away;
        /// returns a weak reference to the fetcher the pipeline was given once the callbacks were let
        /// go and the download ended, or nil (with an issue recorded) if they were not.
        private static func rowsLeaveWhileFetching(
            _ studio: Studio, widths: StageWidths
        ) async -> WeakReference<FetcherOfTheStudio>? {
            let own = FetcherOfTheStudio(studio)
            let list = ListView(ImagePipeline(fetcher: own, decoder: studio, resizer: studio, widths: widths))
            await list.show("running", in: 0)
            await list.show("waiting", in: 1)
            guard await waitUntil("the fetch of row 0 to begin", { studio.saw("running fetch began") }) else {
                return nil
            }
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
            // Its fetches are judged once the callbacks were let go and the cancelled download ended.
            guard freed,
                await waitUntil(
                    "row 0's download to end once the row left", timeout: patience,
                    hint: "The studio saw \(studio.events.timeline). \(lesson.see("Leaving the screen"))",
                    { studio.running(.fetch).isEmpty })
            else { return nil }
            await MainQueue.drain()
            return WeakReference(own)
        }
    }
}
