import Chapter12
import Foundation
import KataTestSupport
import Testing

/// Tries scrolling rows into view in a process of its own before a spec does so here.
///
/// `rowBecameVisible(_:)` may meet a fetch, a decode or a resize that waits in its queue, or a
/// row whose stage is running. A pipeline that hands a waiting fetch to its queue again, to have it sorted anew,
/// traps ("already in a queue"), and would stop every spec of the run; tried first, it costs
/// only the specs that scroll a row into view.
enum Preflight {
    /// Whether scrolling a waiting row and a downloading row into view survives; records an
    /// issue that says how if not.
    static func survivesScrolling(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "pipelineRowsScrolledIn", what: "scrolling a row into view trapped or hung",
            see: lesson.see("Visible rows first"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("pipelineRowsScrolledIn")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected rowBecameVisible(_:) to put the row first and return. Tried in a process of \
                its own, for rows whose fetch, decode or resize waited in its queue and for one whose \
                fetch was downloading, it stopped the process (a signal) or hung it (exit code 3). Most \
                often the pipeline added the waiting stage to its queue a second time to have it sorted \
                anew: an operation that is already in a queue, running or finished cannot be added \
                again, and Foundation stops the program. Replace a waiting stage with a new \
                operation queued at the new priority, and cancel the old one.
                \(lesson.see("Visible rows first"))
                """,
                sourceLocation: sourceLocation
            ) {
                await Preflight.scrollingRun()
            }
            LastWords.explain("pipelineRowsScrolledIn", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Scrolls into view a row whose fetch waits and one whose fetch downloads; 3 if it hangs.
    static func scrollingRun() async {
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let name = "pipelineRowsScrolledIn"
        let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
        let studio = Studio(holding: [.fetch], widths: widths)
        defer { studio.releaseAll() }
        let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
        await list.show("first", in: 0, visible: false)
        _ = await comesTrue(within: patience) { studio.saw("first fetch began") }
        await list.show("soon", in: 1, visible: false)
        LastWords.note(
            name,
            "row 1 scrolled into view while its fetch waited in the queue, and rowBecameVisible(_:) never returned.")
        await list.scrollIntoView(1)
        LastWords.note(
            name, "row 0 scrolled into view while its fetch was downloading, and rowBecameVisible(_:) never returned.")
        await list.scrollIntoView(0)
        LastWords.note(
            name, "rows 0 and 1 had scrolled into view, and the process stopped once their downloads were let go.")
        studio.releaseAll()
        _ = await comesTrue(within: patience) { list.deliveries(to: 1).count == 1 }
        await MainQueue.drain()
        for stage in [Stage.decode, .resize] { await scrollInWhileWaiting(for: stage, widths: widths) }
    }

    /// Scrolls into view a row whose decode or resize waits in its queue behind another row's.
    private static func scrollInWhileWaiting(for stage: Stage, widths: StageWidths) async {
        let name = "pipelineRowsScrolledIn"
        let studio = Studio(holding: [stage], widths: widths)
        defer { studio.releaseAll() }
        let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
        await list.show("held", in: 0, visible: false)
        _ = await comesTrue(within: patience) { studio.saw("held \(stage) began") }
        await list.show("waiting", in: 1, visible: false)
        _ = await comesTrue(within: patience) { studio.saw("waiting \(stage.previous!) ended") }
        await waitUntil(1, rowsWaitFor: stage, in: studio)
        LastWords.note(
            name,
            "row 1 scrolled into view while its \(stage) waited in the queue, and rowBecameVisible(_:) never returned.")
        await list.scrollIntoView(1)
        LastWords.note(
            name,
            """
            row 1 had scrolled into view while its \(stage) waited, and the process stopped once the \
            \(stage) ahead of it was let go.
            """)
        studio.releaseAll()
        _ = await comesTrue(within: patience) { list.deliveries(to: 1).count == 1 }
        await MainQueue.drain()
    }
}

/// Runs a spec that scrolls a row into view only once doing so survived in a trial process:
/// `@Test("…", .preflightScrolling)`.
///
/// When the trial trapped or hung, the spec records the trial's issue instead of running.
struct PreflightTrait: TestTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard await Preflight.survivesScrolling(sourceLocation: test.sourceLocation) else { return }
        try await function()
    }
}

extension Trait where Self == PreflightTrait {
    /// Runs the spec only if scrolling rows into view survives in a trial process.
    static var preflightScrolling: Self { Self() }
}
