import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("An error ends the import")
struct ErrorSpecs {
    // Look at what `Importer.importAll` does when a copy throws: does the rest go on? Lesson:
    // "An error ends the group".
    // Covers: C98
    @Test("a copy that throws ends the import with its error: copies under way are cancelled, no new one starts")
    func aFailedCopyEndsTheImport() async {
        let card = Card(holding: ["a", "b", "c", "d"], failing: ["b"])
        defer { card.releaseAll() }
        let running = RunningImport(Importer(card: card, width: 2), ["a", "b", "c", "d"])
        let hint = lesson.see("An error ends the group")
        guard
            await waitUntil(
                "the copies of a and b to begin", hint: hint, givingUpWhen: beyond(2, on: card),
                { card.running.count == 2 })
        else { return }
        card.release("b")
        guard
            await waitUntil(
                "the import to end once b failed", timeout: patience,
                hint: "The card saw \(card.events.timeline), and the import \(running.ending). \(hint)",
                { running.result != nil })
        else { return }
        #expect(
            running.ending == "threw “b cannot be read”" && card.saw("a cancelled") && !card.saw("c began")
                && !card.saw("d began"),
            """
            b could not be read while a was being copied. Expected the import to throw b's error, \
            a's copy to be cancelled, and c and d never to begin; the card saw \
            \(card.events.timeline), and the import \(running.ending).
            \(hint)
            """)
    }
}
