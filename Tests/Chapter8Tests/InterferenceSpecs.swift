import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("Each thumbnail operation owns its own work", .watched)
struct TwoThumbnails {
    // Two thumbnails working at once, one cancelled; then two of the same picture; then operations
    // cancelled before they started, or finished, and let go. Look at where ThumbnailOperation keeps
    // its Task, its "cancelled" state and its result: in the operation, or somewhere every operation
    // shares (a static, a global, a registry keyed by name or by ObjectIdentifier)? See "Forward
    // cancel() to the Task".
    // Covers: C24, C61
    // Paths: interference, reuse, memory
    @Test(
        "cancelling one of two working thumbnails, even of the same picture, stops only its own work, and later ones still run"
    )
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
        await cancelOneOfTwins(scenario)
        await cancelledAndLetGoRetiresNoOther(scenario, loader)
        await finishedAndLetGoLeavesNoOutcome(scenario)
    }

    /// Two thumbnails of one picture at two widths, each with a loader of its own: cancelling the
    /// first leaves the second working, and it still finishes with its own thumbnail.
    private static func cancelOneOfTwins(_ scenario: String) async {
        let smallLoader = ScriptedLoader()
        let largeLoader = ScriptedLoader()
        let small = ThumbnailOperation(imageName: "p", width: thumbnailWidth, loader: smallLoader)
        let large = ThumbnailOperation(imageName: "p", width: 2 * thumbnailWidth, loader: largeLoader)
        defer {
            smallLoader.endSpec(keepingAlive: small)
            largeLoader.endSpec(keepingAlive: large)
        }
        small.start()
        large.start()
        guard
            await comesTrue(
                within: Bound.standard, { smallLoader.isWaiting("fetch p") && largeLoader.isWaiting("fetch p") })
        else {
            LastWords.fail(
                scenario,
                """
                Two thumbnails of picture p (\(thumbnailWidth) and \(2 * thumbnailWidth) px) were started; \
                their fetches did not both begin: \(smallLoader.trace.timeline); \(largeLoader.trace.timeline).
                """)
        }
        small.cancel()
        let largeTouched = { largeLoader.trace.contains("fetch p saw cancellation") || large.isFinished }
        guard await comesTrue(within: Bound.standard, { small.isFinished || largeTouched() }), !largeTouched()
        else {
            LastWords.fail(
                scenario,
                """
                Two thumbnails of picture p were working; cancelling the \(thumbnailWidth) px one reached the \
                \(2 * thumbnailWidth) px one (its loader saw \(largeLoader.trace.timeline); its result is \
                \(describe(large.result))), and the cancelled one \(small.isFinished ? "finished" : "never finished"). \
                A Task kept by the picture's name belongs to whichever operation of that picture started \
                last. Each operation keeps its own Task.
                """)
        }
        largeLoader.resume("fetch p")
        largeLoader.resume("resize p")
        guard await comesTrue(within: Bound.standard, { large.isFinished }),
            (try? large.result?.get()) == Thumbnail(name: "p", width: 2 * thumbnailWidth), isCancellation(small.result)
        else {
            LastWords.fail(
                scenario,
                """
                After the \(thumbnailWidth) px thumbnail of p was cancelled and the other's work ended, their \
                results are \(describe(small.result)) and \(describe(large.result)); expected \
                failure(CancellationError()) and success(p, \(2 * thumbnailWidth) px).
                """)
        }
    }

    /// An operation cancelled before anyone started it, then let go, three times over: the operation
    /// made right after it (often at the address it freed) and started is not retired by it.
    private static func cancelledAndLetGoRetiresNoOther(_ scenario: String, _ loader: ScriptedLoader) async {
        var later: [ThumbnailOperation] = []
        defer { withExtendedLifetime(later) {} }
        for round in 1...3 {
            let name = "n\(round)"
            let (next, atFreedAddress) = madeAfterOneCancelledAndLetGo(name, loader)
            later.append(next)
            next.start()
            // A retired operation is finished at once: no need to wait out the bound for its fetch.
            guard await comesTrue(within: Bound.standard, { loader.isWaiting("fetch \(name)") || next.isFinished }),
                loader.isWaiting("fetch \(name)")
            else {
                LastWords.fail(
                    scenario,
                    """
                    An operation was cancelled before anyone started it, and its owner let go of it. Then \
                    operation \(name) was made\(atFreedAddress ? ", at the very address the cancelled one had freed," : "") \
                    and started: it never fetched, and its result is \(describe(next.result)) although \
                    nobody cancelled it (isCancelled \(next.isCancelled)). A cancel that is remembered \
                    outside the operation (a static flag the next start() finds, a set of \
                    ObjectIdentifiers that outlives the operations) reaches operations it never belonged to.
                    """)
            }
        }
    }

    /// An operation that finished and was let go, three times over: the operation made right after
    /// it (often at the address it freed) has no result before it ran, and ends with its own thumbnail.
    private static func finishedAndLetGoLeavesNoOutcome(_ scenario: String) async {
        let loader = ScriptedLoader()
        loader.releaseAll()
        var later: [ThumbnailOperation] = []
        defer { withExtendedLifetime(later) {} }
        for round in 1...3 {
            let (old, new) = ("done\(round)", "next\(round)")
            var finished: ThumbnailOperation? = ThumbnailOperation(
                imageName: old, width: thumbnailWidth, loader: loader)
            finished?.start()
            guard await comesTrue(within: Bound.standard, { finished?.isFinished ?? false }) else {
                LastWords.fail(
                    scenario,
                    "Operation \(old), whose loader never waits, was started and never finished. \(loader.trace.timeline)"
                )
            }
            let freed = finished.map { ObjectIdentifier($0) }
            finished = nil
            // Made at once on the same thread: the allocator usually hands the freed address on.
            let next = ThumbnailOperation(imageName: new, width: thumbnailWidth, loader: loader)
            later.append(next)
            let atFreedAddress = ObjectIdentifier(next) == freed
            guard next.result == nil, !next.isFinished, !next.isExecuting else {
                LastWords.fail(
                    scenario,
                    """
                    Operation \(old) finished and its owner let go of it. Then operation \(new) was made\
                    \(atFreedAddress ? ", at the very address \(old) had freed" : ""), and before anyone started it \
                    it reported result \(describe(next.result)), isFinished \(next.isFinished) and isExecuting \
                    \(next.isExecuting); expected nil, false and false. An outcome noted outside the operation (a \
                    table keyed by ObjectIdentifier that outlives its operations) is found by whatever object \
                    takes the freed address next. Keep the result in the operation itself.
                    \(lesson.see("Forward cancel() to the Task"))
                    """)
            }
            next.start()
            let expected = Thumbnail(name: new, width: thumbnailWidth)
            guard await comesTrue(within: Bound.standard, { next.isFinished }), (try? next.result?.get()) == expected
            else {
                LastWords.fail(
                    scenario,
                    """
                    Operation \(new), made after \(old) finished and was let go\
                    \(atFreedAddress ? " (at the address \(old) had freed)" : ""), was started with a loader that \
                    never waits; it reports isFinished \(next.isFinished) and result \(describe(next.result)); \
                    expected success(\(new), \(thumbnailWidth) px). \(loader.trace.timeline)
                    """)
            }
        }
    }

    /// Cancels an operation nobody started, lets go of it, and makes the next one on the same
    /// thread, with nothing between: the allocator usually hands the freed address on.
    private static func madeAfterOneCancelledAndLetGo(
        _ name: String, _ loader: ScriptedLoader
    ) -> (ThumbnailOperation, atFreedAddress: Bool) {
        var cancelled: ThumbnailOperation? = ThumbnailOperation(
            imageName: "dropped", width: thumbnailWidth, loader: loader)
        cancelled?.cancel()
        let freed = cancelled.map { ObjectIdentifier($0) }
        cancelled = nil
        let next = ThumbnailOperation(imageName: name, width: thumbnailWidth, loader: loader)
        return (next, ObjectIdentifier(next) == freed)
    }
}
