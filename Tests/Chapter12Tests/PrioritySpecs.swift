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

        /// Ends the fetch of `held` in the first of `slots` busy slots and returns the next one to
        /// begin after the `begun` fetches so far (one per slot unless said), failing fast if one of
        /// `waiting` began while every slot was busy.
        private func nextFetch(
            after studio: Studio, releasing held: String = "first", slots busy: Int = 1, begun: Int? = nil,
            waiting: [String]
        ) async -> String? {
            let begun = begun ?? busy
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
            studio.release(held)
            guard
                await waitUntil(
                    "another fetch to begin once row 0's ended", hint: lesson.see("Visible rows first"),
                    { studio.began(.fetch).count > begun })
            else { return nil }
            return studio.began(.fetch)[begun]
        }

        // Look at how `ImagePipeline.request` ranks a row on screen against one being prefetched,
        // and when it does so. Lesson: "Visible rows first" and Chapter 6.
        // Covers: C87, C43, C48
        // Paths: values
        @Test(
            "when rows wait for a fetch, a row on screen starts before rows being prefetched, wherever it sits in the list"
        )
        func visibleRowsStartBeforePrefetchedRows() async {
            guard let (studio, list) = await busyPipeline() else { return }
            defer { studio.releaseAll() }
            // The prefetched rows sit above the row on screen: only `visible` tells them apart.
            await list.show("soon1", in: 2, visible: false)
            await list.show("soon2", in: 3, visible: false)
            await list.show("now", in: 40, visible: true)
            guard let next = await nextFetch(after: studio, waiting: ["soon1", "soon2", "now"]) else { return }
            #expect(
                next == "now",
                """
                Rows 2 and 3 were being prefetched and row 40 was on screen, all waiting for the fetch \
                slot; expected row 40's fetch (now) to begin next, but \(next)'s did. The user looks at \
                row 40: whether a row is on screen is what `visible` says, not where it sits in the list.
                \(lesson.see("Visible rows first"))
                """)
        }

        // Look at what `ImagePipeline.rowBecameVisible(_:)` remembers once the row it raised got
        // its thumbnail: the request it raised, or the row number, for good? Lesson: "Visible rows
        // first".
        // Covers: C87, C48
        // Paths: reuse
        @Test(
            "a row raised once, then asked for again as prefetched, waits behind a row on screen like any prefetched row",
            .preflightScrolling)
        func raiseBelongsToItsRequest() async {
            guard let (studio, list) = await busyPipeline() else { return }
            defer { studio.releaseAll() }
            await list.show("soon", in: 5, visible: false)
            await list.scrollIntoView(5)
            studio.release("first")
            studio.release("soon")
            let hint = lesson.see("Visible rows first")
            guard
                await waitUntil(
                    "row 5, raised while its fetch waited, to get its thumbnail", hint: hint,
                    { list.deliveries(to: 5).count == 1 })
            else { return }
            // Later the fetch slot is busy again; row 5 is prefetched again, then row 1 is asked on screen.
            await list.show("block", in: 0)
            guard await waitUntil("the fetch of block to begin", { studio.saw("block fetch began") }) else { return }
            await list.show("again", in: 5, visible: false)
            await list.show("now", in: 1, visible: true)
            guard let next = await nextFetch(after: studio, releasing: "block", begun: 3, waiting: ["again", "now"])
            else { return }
            #expect(
                next == "now",
                """
                Row 5 was raised once and got its thumbnail; later it was asked for again, only \
                prefetched, and then row 1 was asked for on screen, both waiting for the fetch slot. \
                Expected row 1's fetch (now) to begin next, but \(next)'s did: the pipeline still \
                ranked row 5 as on screen. Being on screen belongs to a request, as \
                `request(row:url:visible:deliver:)` and `rowBecameVisible(_:)` say it, not to the row \
                number for good.
                \(hint)
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
