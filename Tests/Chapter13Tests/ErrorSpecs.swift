import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("An error ends the import", .watched)
struct ErrorSpecs {
    // Look at what `Importer.importAll` does when a copy throws: what is cancelled, and can the
    // slot the failed copy gives back still start another copy? Lesson: "An error ends the group".
    // Covers: C98
    @Test(
        "a copy that throws ends the import with its error: copies under way are cancelled, and none starts, even while the import reports progress"
    )
    func aFailedCopyEndsTheImport() async {
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
        // while the second copy fails and gives its slot back.
        let gate = Gate("the main actor")
        MainQueue.hold(until: gate) {}
        card.release(copied)
        guard
            await waitUntil(
                "a fourth copy to begin in the slot \(copied) gave back", hint: hint, { card.began.count == 4 })
        else {
            gate.open()
            return
        }
        let next = card.began[3]
        let waiting = names.filter { !card.began.contains($0) }
        card.fail(failing)
        guard await waitUntil("the copy of \(failing) to fail", { card.saw("\(failing) failed") }) else {
            gate.open()
            return
        }
        let started = await comesTrue(within: window) { card.began.count > 4 }
        gate.open()
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
