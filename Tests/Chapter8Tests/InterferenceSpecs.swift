import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("Each thumbnail operation owns its own work", .watched)
struct TwoThumbnails {
    // Two thumbnails working at once, one cancelled. Look at where ThumbnailOperation keeps its
    // Task and its "cancelled" state: in the operation, or somewhere every operation shares (a
    // static, a global, a registry keyed by name)? See "Forward cancel() to the Task".
    // Covers: C24, C61
    // Paths: interference, reuse
    @Test("cancelling one of two working thumbnails stops only its own work, and a later one still runs")
    func cancellingOneLeavesTheOtherAlone() async {
        // In a process of its own: state every operation shares would otherwise be set and reset
        // by the specs running beside it, and decide this spec's verdict.
        let scenario = "chapter8-two-thumbnails"
        LastWords.forget(scenario)
        let explanation = """
            The child process that cancelled one of two working thumbnails stopped before it could \
            judge. \(lesson.see("Forward cancel() to the Task"))
            """
        let outcome = await #expect(processExitsWith: .success, Comment(rawValue: explanation)) {
            await TwoThumbnails.cancelOneOfTwo()
        }
        LastWords.explain(scenario, outcome)
    }

    /// Starts a and b, cancels a while both fetches wait, then checks b and a third operation c.
    /// Runs in an exit test, beside no other spec; fails the child with words for the spec.
    static func cancelOneOfTwo() async {
        let scenario = "chapter8-two-thumbnails"
        let loader = ScriptedLoader()
        let a = ThumbnailOperation(imageName: "a", width: thumbnailWidth, loader: loader)
        let b = ThumbnailOperation(imageName: "b", width: thumbnailWidth, loader: loader)
        defer { loader.endSpec(keepingAlive: a, b) }
        a.start()
        b.start()
        guard await comesTrue(within: Bound.standard, { loader.isWaiting("fetch a") && loader.isWaiting("fetch b") })
        else {
            LastWords.fail(scenario, "The fetches of a and b did not both begin. \(loader.trace.timeline)")
        }
        a.cancel()
        guard await comesTrue(within: Bound.standard, { a.isFinished }) else {
            LastWords.fail(scenario, "a, cancelled while its fetch waited, never finished. \(loader.trace.timeline)")
        }
        let bTouched = loader.trace.contains("fetch b saw cancellation") || b.isFinished
        if bTouched || !loader.isWaiting("fetch b") {
            LastWords.fail(
                scenario,
                """
                Cancelling a reached b: b's result is \(describe(b.result)) and the loader saw \
                \(loader.trace.timeline). Each operation cancels its own Task, kept in the operation, \
                never in a static, a global or a registry that another operation shares.
                """)
        }
        loader.resume("fetch b")
        loader.resume("resize b")
        guard await comesTrue(within: Bound.standard, { b.isFinished }) else {
            LastWords.fail(scenario, "b never finished once its fetch and resize returned. \(loader.trace.timeline)")
        }
        guard (try? b.result?.get()) == Thumbnail(name: "b", width: thumbnailWidth), isCancellation(a.result) else {
            LastWords.fail(
                scenario,
                """
                After a was cancelled and b's work ended, a's result is \(describe(a.result)) and b's \
                \(describe(b.result)); expected failure(CancellationError()) and success(b). Each \
                operation publishes its own outcome.
                """)
        }
        // A cancel belongs to one operation: a third one made afterwards still does its work.
        let c = ThumbnailOperation(imageName: "c", width: thumbnailWidth, loader: loader)
        defer { withExtendedLifetime(c) {} }
        c.start()
        guard await comesTrue(within: Bound.standard, { loader.isWaiting("fetch c") }) else {
            LastWords.fail(
                scenario,
                """
                After a was cancelled, a new operation c started by hand never fetched: its result is \
                \(describe(c.result)) (\(loader.trace.timeline)). A "cancelled" flag that every \
                operation shares, and that nothing resets, retires every later operation.
                """)
        }
    }
}
