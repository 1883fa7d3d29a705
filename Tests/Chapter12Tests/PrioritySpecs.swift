import Chapter12
import Foundation
import KataTestSupport
import Testing

extension Chapter12Specs {
    @Suite("What the user sees is fetched first")
    struct PrioritySpecs {
        /// Fills every fetch slot, one per image of `busy` (row 0 has the first, row 1 the next…),
        /// with downloads held until the spec releases them.
        private func busyPipeline(_ busy: [String] = ["first"]) async -> (Studio, ListView)? {
            let widths = StageWidths(fetches: busy.count, decodes: 1, resizes: 1)
            let studio = Studio(holding: [.fetch], widths: widths)
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
            for (row, image) in busy.enumerated() {
                await list.show(image, in: row)
                guard await waitUntil("the fetch of row \(row) to begin", { studio.saw("\(image) fetch began") }) else {
                    return nil
                }
            }
            return (studio, list)
        }

        /// Ends the fetch in the first of `slots` busy slots and returns the next one to begin,
        /// failing fast if one of `waiting` began while every slot was busy.
        private func nextFetch(after studio: Studio, slots busy: Int = 1, waiting: [String]) async -> String? {
            let startedEarly = await comesTrue(within: window) {
                studio.began(.fetch).contains(where: waiting.contains)
            }
            let early = studio.began(.fetch).filter(waiting.contains)
            guard !startedEarly else {
                Issue.record(
                    """
                    With a fetch width of \(busy) and as many downloads under way, the fetches of \
                    \(early.joined(separator: ", ")) began anyway: nothing waited, so nothing could be \
                    put first. The operation must stay in its queue until its download ends.
                    \(lesson.see("A width per stage"))
                    """)
                return nil
            }
            studio.release("first")
            guard
                await waitUntil(
                    "another fetch to begin once row 0's ended", hint: lesson.see("Visible rows first"),
                    { studio.began(.fetch).count > busy })
            else { return nil }
            return studio.began(.fetch)[busy]
        }

        // Look at how `ImagePipeline.request` ranks a row on screen against one being prefetched,
        // and when it does so. Lesson: "Visible rows first" and Chapter 6.
        // Covers: C87, C43, C48
        @Test("when rows wait for a fetch, a row on screen starts before rows being prefetched")
        func visibleRowsStartBeforePrefetchedRows() async {
            guard let (studio, list) = await busyPipeline() else { return }
            defer { studio.releaseAll() }
            await list.show("soon1", in: 5, visible: false)
            await list.show("soon2", in: 6, visible: false)
            await list.show("now", in: 1, visible: true)
            guard let next = await nextFetch(after: studio, waiting: ["soon1", "soon2", "now"]) else { return }
            #expect(
                next == "now",
                """
                Rows 5 and 6 were being prefetched and row 1 was on screen, all waiting for the fetch \
                slot; expected row 1's fetch (now) to begin next, but \(next)'s did. The user looks at \
                row 1.
                \(lesson.see("Visible rows first"))
                """)
        }

        // Look at what `ImagePipeline.rowBecameVisible(_:)` does to a fetch that is already waiting
        // in its queue, and at what that fetch reports once its queue retires it. Lesson: "Visible
        // rows first" and "Exactly once".
        // Covers: C87, C48, C91
        @Test(
            "a prefetched row that scrolls into view goes before the rows still being prefetched, and gets only its thumbnail, once",
            .preflightScrolling)
        func rowScrolledIntoViewIsRaised() async {
            // Two slots: the second lets the queue retire what it still holds while row 7's download is held.
            guard let (studio, list) = await busyPipeline(["first", "second"]) else { return }
            defer { studio.releaseAll() }
            await list.show("soon1", in: 5, visible: false)
            await list.show("soon2", in: 6, visible: false)
            await list.show("soon3", in: 7, visible: false)
            await list.scrollIntoView(7)
            guard let next = await nextFetch(after: studio, slots: 2, waiting: ["soon1", "soon2", "soon3"]) else {
                return
            }
            #expect(
                next == "soon3",
                """
                Rows 5, 6 and 7 were prefetched, then row 7 scrolled into view while all three waited; \
                expected row 7's fetch (soon3) to begin next, but \(next)'s did.
                \(lesson.see("Visible rows first"))
                """)
            // Row 7's download stays held while every fetch queued before row 8's gets its turn: a
            // fetch cancelled while it waited still finishes, once its queue starts it.
            await list.show("last", in: 8, visible: false)
            for image in ["second", "soon1", "soon2"] { studio.release(image) }
            guard
                await waitUntil(
                    "row 8's fetch (last) to begin once the fetches queued before it had their turn",
                    { studio.saw("last fetch began") })
            else { return }
            _ = await comesTrue(within: window) { !list.deliveries(to: 7).isEmpty }
            studio.releaseAll()
            await waitUntil("row 7 to get its thumbnail once") { list.deliveries(to: 7).count == 1 }
            _ = await comesTrue(within: window) { list.deliveries(to: 7).count > 1 }
            await MainQueue.drain()
            #expect(
                list.deliveries(to: 7).map(\.outcome) == [ListView.thumbnail(of: "soon3")],
                """
                Row 7 should get its thumbnail once, however its fetch was raised; it got \
                \(list.deliveries(to: 7).map(\.outcome)). A fetch replaced by a raise is cancelled \
                and finishes when its queue gets to it, while the row still waits: only the row's \
                current stage may move it on or answer it.
                \(lesson.see("Exactly once"))
                """)
        }
    }
}
