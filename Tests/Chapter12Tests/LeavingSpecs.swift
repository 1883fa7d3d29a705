import Chapter12
import Foundation
import KataTestSupport
import Testing

extension Chapter12Specs {
    @Suite("A row that leaves the screen stops, and gets nothing")
    struct LeavingSpecs {
        // Look at what `ImagePipeline.rowLeftScreen(_:)` does to a download under way and to one
        // still waiting, and at what it remembers of the row afterwards. Lesson: "Leaving the
        // screen" and Chapter 8.
        // Covers: C89, C50, C61
        // Paths: reuse
        @Test(
            "leaving the screen cancels a running fetch, drops a waiting one, frees the slot, and a row that comes back, prefetched, gets its image"
        )
        func rowLeavingCancelsItsFetch() async {
            let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
            let studio = Studio(holding: [.fetch], widths: widths)
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
            await list.show("running", in: 0)
            await list.show("waiting", in: 1)
            guard await waitUntil("the fetch of row 0 to begin", { studio.saw("running fetch began") }) else { return }
            // The waiting row first: once row 0's fetch ends, row 1's may start at once.
            await list.scrollAway(1, 0)
            let hint = lesson.see("Leaving the screen")
            guard
                await waitUntil(
                    "the fetch of row 0 to be cancelled once it left the screen", timeout: patience,
                    hint: """
                        The download went on for a row nobody sees; the studio saw \
                        \(studio.events.timeline). Cancelling its operation must reach the task that \
                        downloads. \(hint)
                        """,
                    { studio.saw("running fetch cancelled") })
            else { return }
            await list.show("next", in: 2)
            guard
                await waitUntil(
                    "row 2's fetch to begin in the slot row 0 freed", timeout: patience,
                    hint: "The studio saw \(studio.events.timeline). \(hint)",
                    { studio.saw("next fetch began") })
            else { return }
            studio.release("next")
            await waitUntil("row 2 to get its thumbnail", hint: hint) { list.deliveries(to: 2).count == 1 }
            await MainQueue.drain()
            #expect(
                !studio.saw("waiting fetch began"),
                """
                Row 1 left the screen while its fetch waited, yet the fetch began later: \
                \(studio.events.timeline).
                \(hint)
                """)
            #expect(
                list.deliveries(to: 0).isEmpty && list.deliveries(to: 1).isEmpty
                    && !studio.saw("running decode began"),
                """
                Rows 0 and 1 left the screen; expected them to get nothing and to decode nothing, but \
                the list got \(list.deliveries.timeline) and the studio saw \(studio.events.timeline).
                \(hint)
                """)
            // Row 0 is about to scroll back, and the list view prefetches its image again: a
            // request like any other, whether on screen or prefetched.
            studio.release("running")
            await list.show("running", in: 0, visible: false)
            guard
                await waitUntil(
                    "row 0, about to come back and asked for again (prefetched), to get its thumbnail",
                    timeout: patience,
                    hint: """
                        The studio saw \(studio.events.timeline). Whatever the pipeline remembers of a row \
                        that left belongs to the request that left, not to the row: a new request for it \
                        starts afresh. \(hint)
                        """,
                    { !list.deliveries(to: 0).isEmpty })
            else { return }
            _ = await comesTrue(within: window) { list.deliveries(to: 0).count > 1 }
            await MainQueue.drain()
            let back = "row 0 (request 2) got \(ListView.thumbnail(of: "running"))"
            #expect(
                list.deliveries(to: 0).map(\.description) == [back],
                """
                Row 0 left the screen and was asked for again, prefetched, as it came back; expected \
                only its new request to be answered, once, with running's thumbnail, but the list got \
                \(list.deliveries(to: 0).map(\.description)). Whatever marks a request as gone \
                belongs to that request, not to the row, whichever way the row is asked for again.
                \(hint)
                """)
        }

        // Look at what `ImagePipeline.request` does with the request a row already had: whose
        // callback gets the old image, and who still holds it? Lesson: "Exactly once" and Chapter 1.
        // Covers: C92, C91, C3, C7, C93
        // Paths: interference, memory
        @Test("a row asked again for another image gets only the new one, once, and the old request is let go")
        func newerRequestForARowWins() async {
            let studio = Studio(holding: [.fetch])
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
            await list.show("old", in: 0)
            guard await waitUntil("the fetch of old to begin", { studio.saw("old fetch began") }) else { return }
            // The cell was reused: row 0 now shows another item.
            await list.show("new", in: 0)
            studio.release("old")
            guard
                await waitUntil(
                    "the fetch of old to end, or to be cancelled", timeout: patience,
                    { studio.saw("old fetch ended") || studio.saw("old fetch cancelled") })
            else { return }
            studio.release("new")
            let hint = lesson.see("Exactly once")
            guard
                await waitUntil(
                    "row 0 to get new's thumbnail", timeout: patience, hint: hint,
                    { list.deliveries(to: 0).contains { $0.request == 2 } })
            else { return }
            _ = await comesTrue(within: window) { list.deliveries(to: 0).count > 1 }
            await MainQueue.drain()
            let got = list.deliveries(to: 0)
            let onlyTheNewOne = got.map(\.description) == ["row 0 (request 2) got \(ListView.thumbnail(of: "new"))"]
            #expect(
                onlyTheNewOne,
                """
                Row 0 asked for old, then, reused, for new. Expected only the second request's \
                callback to be called, once, with new's thumbnail; the list got \
                \(got.map(\.description).joined(separator: "; ")).
                \(hint)
                """)
            // Memory is judged once the answers are right: a design that answers wrongly has that to fix first.
            guard onlyTheNewOne else { return }
            let freed = await comesTrue(within: patience) {
                list.cellsInMemory.isEmpty && studio.bitmapsInMemory.isEmpty && studio.operationsInMemory.isEmpty
            }
            #expect(
                freed,
                """
                Row 0's old request was replaced and its new one answered, yet \(patience.seconds) s later \
                these were still in memory: \(list.cellsInMemory + studio.bitmapsInMemory + studio.operationsInMemory). \
                A replaced request is never answered, so nothing may keep it or the cell its callback \
                captured: not a list of old requests, not a stage's completion block.
                \(lesson.see("Nothing kept"))
                """)
        }
    }
}
