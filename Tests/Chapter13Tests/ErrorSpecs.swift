import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("An error ends the import", .watched)
struct ErrorSpecs {
    // Look at what `Importer.importAll` does when a copy throws: what is cancelled, and can the
    // slot the failed copy gives back still start another copy? And does anything but the report
    // wait for the main actor, busy here? Lessons: "An error ends the group", "Progress as it
    // happens".
    // Covers: C98, C95
    @Test(
        "a copy that throws ends the import with its error: copies under way are cancelled, and none starts, even while the import reports progress"
    )
    func aFailedCopyEndsTheImport() async {
        let outcome = await #expect(
            processExitsWith: .success,
            "The child process that kept the main actor busy stopped before it could judge. \(lesson.see("An error ends the group"))"
        ) {
            await ErrorSpecs.failWhileTheMainActorIsBusy()
        }
        LastWords.explain(outcome)
    }

    /// Fails one of three copies under way while the import's loop waits to report the first,
    /// then looks at what started and what the import threw. Runs in an exit test: it keeps the
    /// main actor busy, which would delay every other spec's reports.
    static func failWhileTheMainActorIsBusy() async {
        let names = ["a", "b", "c", "d", "e"]
        let card = Card(holding: Set(names))
        defer { card.releaseAll() }
        let running = RunningImport(Importer(card: card, width: 3), names)
        let hint = lesson.see("An error ends the group")
        guard
            await waitUntil(
                "three copies to begin", hint: hint, givingUpWhen: beyond(3, on: card), { card.running.count == 3 })
        else { return }
        let (copied, failing, underWay) = (card.running[0], card.running[1], card.running[2])
        // The main actor is kept busy, so the import's loop waits to report the first photo
        // while the second copy fails and gives its slot back. The hold lasts longer than any
        // wait below, and the spec checks it still did when it judges.
        let held = HeldMainQueue()
        defer { held.release() }
        guard await held.begun() else { return }
        card.release(copied)
        guard
            await waitUntil(
                "a fourth copy to begin in the slot \(copied) gave back",
                hint: """
                    The main actor was busy, so the import could not report \(copied) yet; the card \
                    saw \(card.events.timeline). The next copy starts as soon as one ends, not once \
                    the report has reached the main actor: nothing but the report waits for it. \
                    \(lesson.see("Progress as it happens"))
                    """,
                givingUpWhen: { held.isInForce ? nil : "the main actor was let go before" },
                { card.began.count == 4 })
        else { return }
        let next = card.began[3]
        let waiting = names.filter { !card.began.contains($0) }
        card.fail(failing)
        guard await waitUntil("the copy of \(failing) to fail", { card.saw("\(failing) failed") }) else { return }
        let started = await comesTrue(within: window) { card.began.count > 4 }
        let inForce = held.isInForce
        held.release()
        guard inForce else {
            Issue.record("\(HeldMainQueue.endedTooSoon)\n\(hint)")
            return
        }
        guard
            await waitUntil(
                "the import to end once \(failing) failed", timeout: patience,
                hint: "The card saw \(card.events.timeline), and the import \(running.ending). \(hint)",
                { running.result != nil })
        else { return }
        #expect(
            !started && waiting.allSatisfy { !card.saw("\($0) began") },
            """
            \(failing) could not be read; its slot then started \
            \(card.began.filter(waiting.contains).joined(separator: " and ")), though the import \
            had already failed: the card saw \(card.events.timeline). A slot given back after a \
            failure must not start another copy, even before the group has been cancelled.
            \(hint)
            """)
        #expect(
            running.ending == "threw “\(failing) cannot be read”" && card.saw("\(underWay) cancelled")
                && card.saw("\(next) cancelled"),
            """
            Expected the import to throw \(failing)'s error and the copies still under way, \(underWay) \
            and \(next), to be cancelled; the card saw \(card.events.timeline), and the import \
            \(running.ending).
            \(hint)
            """)
    }
}
