import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("Progress as each photo is copied, on the main actor")
struct ProgressSpecs {
    // Look at where `Importer.importAll` calls `progress`: once every copy is done, or each
    // time one is? Lesson: "Progress as it happens".
    // Covers: C95
    @Test("each copied photo is reported on the main actor before the next one ends")
    func progressArrivesAsEachPhotoIsCopied() async {
        let names = ["a", "b", "c"]
        let card = Card(holding: Set(names))
        defer { card.releaseAll() }
        let running = RunningImport(Importer(card: card, width: 2), names)
        let hint = lesson.see("Progress as it happens")
        guard
            await waitUntil(
                "two copies to begin", hint: hint, givingUpWhen: beyond(2, on: card),
                { card.running.count == 2 })
        else { return }
        for copied in names.indices {
            guard let name = card.running.first else { break }
            card.release(name)
            guard
                await waitUntil(
                    "progress to report \(copied + 1) of 3 once \(name) was copied", timeout: patience,
                    hint: """
                        The card copied \(card.events.all.filter { $0.hasSuffix(" copied") }.map { String($0.dropLast(7)) }.joined(separator: ", ")), \
                        and progress reported \(running.progress.all.isEmpty ? "nothing" : running.progress.all.joined(separator: ", ")) \
                        (the import \(running.ending)). A progress bar that moves only at the end is \
                        no progress bar: report each photo as the group hands it back. \(hint)
                        """,
                    { running.progress.count > copied })
            else { return }
        }
        guard await waitUntil("the import to end", hint: hint, { running.result != nil }) else { return }
        #expect(
            running.progress.all == ["1 of 3", "2 of 3", "3 of 3"],
            """
            Expected progress 1 of 3, 2 of 3, 3 of 3, each on the main actor; it reported \
            \(running.progress.all.joined(separator: ", ")).
            \(hint)
            """)
    }
}
