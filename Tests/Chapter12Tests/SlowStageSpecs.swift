import Chapter12
import Foundation
import KataTestSupport
import Testing

/// Specs that hold a decode or a resize, which blocks a thread: they run one at a time, so that
/// they never hold more than one of the few threads the whole test process shares.
@Suite("Slow stages", .serialized)
struct SlowStageSpecs {
    // Look at what bounds the decodes and the resizes in `ImagePipeline`, and at whether a row
    // keeps an earlier stage's slot while it waits for the next. Lesson: "A width per stage".
    // Covers: C86, C85, C53
    @Test(
        "decodes and resizes keep to their widths, and a slow one holds up no earlier stage",
        arguments: [Stage.decode, .resize])
    func slowStagesStayWithinTheirWidth(_ stage: Stage) async {
        let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
        let studio = Studio(holding: [stage], widths: widths)
        defer { studio.releaseAll() }
        let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
        await list.show("a", in: 0)
        await list.show("b", in: 1)
        let hint = lesson.see("A width per stage")
        let tooMany = {
            studio.peak(stage) > 1
                ? "\(studio.peak(stage)) \(stage)s ran at once (\(studio.began(stage).joined(separator: ", ")) began)"
                : nil
        }
        guard
            await waitUntil(
                "the \(stage) of a to begin", hint: hint, givingUpWhen: tooMany,
                { studio.saw("a \(stage) began") })
        else { return }
        let before = stage.previous!
        guard
            await waitUntil(
                "b's \(before) to run and end while a's \(stage) is still under way", timeout: patience,
                hint: """
                    Each stage has its own width: a row waiting in, or running, its \(stage) holds no \
                    \(before) slot. The studio saw \(studio.events.timeline). \(hint)
                    """,
                givingUpWhen: tooMany, { studio.saw("b \(before) ended") })
        else { return }
        let extra = await comesTrue(within: window) { studio.peak(stage) > 1 }
        #expect(
            !extra,
            """
            With a \(stage) width of 1, \(studio.peak(stage)) \(stage)s ran at once: \
            \(studio.began(stage).joined(separator: ", ")) began while a's was under way.
            \(hint)
            """)
        studio.releaseAll()
        await waitUntil("both rows to get their thumbnails", hint: hint) { list.deliveries.count == 2 }
        for each in Stage.allCases {
            #expect(
                studio.peak(each) <= 1,
                "With every width 1, \(studio.peak(each)) \(each)s ran at once. \(hint)")
        }
    }

    // Look at what `ImagePipeline.rowLeftScreen(_:)` stops, and at what runs once a decode that
    // was under way ends. Lesson: "Leaving the screen".
    // Covers: C89, C93, C50
    @Test("a row that leaves the screen while it decodes is never resized, gets nothing, and frees its bitmap")
    func rowLeavingWhileDecodingGetsNothing() async {
        let studio = Studio(holding: [.decode])
        defer { studio.releaseAll() }
        let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
        await list.show("a", in: 0)
        guard await waitUntil("the decode of a to begin", { studio.saw("a decode began") }) else { return }
        await list.scrollAway(0)
        studio.release("a")
        let hint = lesson.see("Leaving the screen")
        guard await waitUntil("the decode of a to end", hint: hint, { studio.saw("a decode ended") }) else { return }
        let resized = await comesTrue(within: window * 2) { studio.saw("a resize began") || list.deliveries.count > 0 }
        await MainQueue.drain()
        #expect(
            !resized && list.deliveries.count == 0,
            """
            Row 0 left the screen while a was decoding; expected no resize and no delivery, but the \
            studio saw \(studio.events.timeline) and the list got \(list.deliveries.all.isEmpty ? "nothing" : list.deliveries.timeline). \
            A running stage cannot be interrupted, but what comes after it must not run.
            \(hint)
            """)
        let freed = await comesTrue(within: patience) {
            studio.bitmapsInMemory.isEmpty && list.cellsInMemory.isEmpty
        }
        #expect(
            freed,
            """
            Row 0 left the screen and its decode ended, yet \(patience.seconds) s later these were \
            still in memory: \(studio.bitmapsInMemory + list.cellsInMemory).
            \(lesson.see("Nothing kept"))
            """)
    }
}
