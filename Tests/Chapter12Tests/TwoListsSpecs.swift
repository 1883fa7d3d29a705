import Chapter12
import Foundation
import KataTestSupport
import Testing

/// Two lists on screen at once, each with its own pipeline, run in a child process.
///
/// A pipeline that keeps its rows or its stage queues in a `static` shares them with every other
/// pipeline, and with the pipelines of the specs running beside this one: in the chapter's run
/// those would set and reset that state too, so the scenario runs beside no other spec.
enum TwoListsScenario {
    /// The first list downloads rows 0 and 1 (its two fetch slots), then the second list, whose
    /// fetch width is one, asks for its own row 0.
    static func bothListsAnswered() async {
        exitIfStillRunning(after: patience * 8, status: EXIT_FAILURE)
        let wide = StageWidths(fetches: 2, decodes: 1, resizes: 1)
        let narrow = StageWidths(fetches: 1, decodes: 1, resizes: 1)
        let studio = Studio(holding: [.fetch], widths: wide)
        defer { studio.releaseAll() }
        let first = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: wide))
        await first.show("a1", in: 0)
        await first.show("a2", in: 1)
        guard
            await waitUntil(
                "both of the first list's fetches to begin (its fetch width is 2)", timeout: patience,
                { studio.running(.fetch).count == 2 })
        else { return }
        let second = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: narrow))
        await second.show("b", in: 0)
        guard
            await waitUntil(
                "the second list's fetch (b) to begin while the first list's two downloads run", timeout: patience,
                hint: """
                    The second pipeline has a fetch slot of its own, yet its fetch waited: the studio \
                    saw \(studio.events.timeline). Each pipeline makes its own stage queues, with its \
                    own widths; queues kept in a static are shared by every pipeline, and the last \
                    one made sets their width. \(lesson.see("A width per stage"))
                    """,
                { studio.saw("b fetch began") })
        else { return }
        studio.releaseAll()
        guard
            await waitUntil(
                "rows 0 and 1 of the first list and row 0 of the second to get their thumbnails", timeout: patience,
                hint: """
                    The first list got \(first.deliveries.timeline), the second \(second.deliveries.timeline); \
                    the studio saw \(studio.events.timeline). A pipeline keeps its rows for itself: \
                    the second list's row 0 is not the first list's. \(lesson.see("Exactly once"))
                    """,
                { first.deliveries.count >= 2 && second.deliveries.count >= 1 })
        else { return }
        _ = await comesTrue(within: window) { first.deliveries.count > 2 || second.deliveries.count > 1 }
        await MainQueue.drain()
        let got = (first.deliveries.all + second.deliveries.all).map(\.description)
        let expected = [
            "row 0 (request 1) got \(ListView.thumbnail(of: "a1"))",
            "row 1 (request 1) got \(ListView.thumbnail(of: "a2"))",
            "row 0 (request 1) got \(ListView.thumbnail(of: "b"))",
        ]
        #expect(
            got.sorted() == expected.sorted(),
            """
            Two lists, each with its own pipeline, asked for a1 and a2 (the first) and b (the \
            second, whose row 0 is its own); expected each request answered once, on the main \
            queue: \(expected.joined(separator: "; ")). They got \(got.joined(separator: "; ")).
            \(lesson.see("Exactly once"))
            """)
        withExtendedLifetime((first, second)) {}
    }
}

extension TwoListsScenario {
    /// The first list, whose decode width is two, decodes rows 0 and 1 after a second list, whose
    /// decode width is one, was made: both decodes run at once.
    static func decodeWidthsStayApart() async {
        let wide = StageWidths(fetches: 2, decodes: 2, resizes: 1)
        let narrow = StageWidths(fetches: 1, decodes: 1, resizes: 1)
        let studio = Studio(holding: [.decode], widths: wide)
        defer { studio.releaseAll() }
        let first = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: wide))
        let second = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: narrow))
        await first.show("c1", in: 0)
        await first.show("c2", in: 1)
        guard
            await waitUntil(
                "both of the first list's decodes to run at once (its decode width is 2)", timeout: patience,
                hint: """
                    A second list, whose decode width is 1, was made after the first; the studio saw \
                    \(studio.events.timeline). Each pipeline makes its own decode queue, with its own \
                    width; a decode queue kept in a static is shared by every pipeline, and the last one \
                    made sets its width. \(lesson.see("A width per stage"))
                    """,
                { studio.running(.decode).count == 2 })
        else { return }
        studio.releaseAll()
        guard
            await waitUntil(
                "rows 0 and 1 of the first list to get their thumbnails", timeout: patience,
                { first.deliveries.count >= 2 })
        else { return }
        withExtendedLifetime((first, second)) {}
    }
}

extension Chapter12Specs {
    @Suite("Two lists, two pipelines")
    struct TwoListsSpecs {
        // Two lists, each with its own `ImagePipeline`, ask for their row 0 at once. Look at where
        // `ImagePipeline` keeps its rows and its stage queues: in the pipeline, or somewhere every
        // pipeline shares (a static, a global)? Lesson: "Exactly once" and "A width per stage".
        // Covers: C91, C86
        // Paths: interference
        @Test(
            "two lists' pipelines each keep their own rows and widths: one list's row 0 and slots are not the other's"
        )
        func twoListsLeaveEachOtherAlone() async {
            let outcome = await #expect(
                processExitsWith: .success,
                """
                The child process that ran two lists, each with its own pipeline, stopped before it \
                could judge (a trap, or no answer within \((patience * 8).seconds) s).
                \(lesson.see("Exactly once"))
                """
            ) {
                await TwoListsScenario.bothListsAnswered()
                await TwoListsScenario.decodeWidthsStayApart()
            }
            LastWords.explain(outcome)
        }
    }
}
