import Chapter12
import Foundation
import KataTestSupport
import Testing

@Suite("What the user sees is fetched first")
struct PrioritySpecs {
    /// Fills the only fetch slot with row 0's download of `first`, held until the spec releases it.
    private func busyPipeline() async -> (Studio, ListView)? {
        let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
        let studio = Studio(holding: [.fetch], widths: widths)
        let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
        await list.show("first", in: 0)
        guard await waitUntil("the fetch of row 0 to begin", { studio.saw("first fetch began") }) else { return nil }
        return (studio, list)
    }

    /// Ends the fetch in the slot and returns the next one to begin, failing fast if several began.
    private func nextFetch(after studio: Studio, waiting: [String]) async -> String? {
        let startedEarly = await comesTrue(within: window) {
            studio.began(.fetch).contains(where: waiting.contains)
        }
        let early = studio.began(.fetch).filter(waiting.contains)
        guard !startedEarly else {
            Issue.record(
                """
                With a fetch width of 1 and row 0's download under way, the fetches of \
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
                { studio.began(.fetch).count >= 2 })
        else { return nil }
        return studio.began(.fetch)[1]
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
    // in its queue. Lesson: "Visible rows first".
    // Covers: C87, C48
    @Test("a prefetched row that scrolls into view goes before the rows still being prefetched")
    func rowScrolledIntoViewIsRaised() async {
        guard let (studio, list) = await busyPipeline() else { return }
        defer { studio.releaseAll() }
        await list.show("soon1", in: 5, visible: false)
        await list.show("soon2", in: 6, visible: false)
        await list.show("soon3", in: 7, visible: false)
        await list.scrollIntoView(7)
        guard let next = await nextFetch(after: studio, waiting: ["soon1", "soon2", "soon3"]) else { return }
        #expect(
            next == "soon3",
            """
            Rows 5, 6 and 7 were prefetched, then row 7 scrolled into view while all three waited; \
            expected row 7's fetch (soon3) to begin next, but \(next)'s did.
            \(lesson.see("Visible rows first"))
            """)
        studio.releaseAll()
        await waitUntil("row 7 to get its thumbnail once") { list.deliveries(to: 7).count == 1 }
        await MainQueue.drain()
        #expect(
            list.deliveries(to: 7).map(\.outcome) == [ListView.thumbnail(of: "soon3")],
            """
            Row 7 should get its thumbnail once, however its fetch was raised; it got \
            \(list.deliveries(to: 7).map(\.outcome)).
            \(lesson.see("Exactly once"))
            """)
    }
}
