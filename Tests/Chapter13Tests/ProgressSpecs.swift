import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("Progress as each photo is copied, on the main actor", .watched)
struct ProgressSpecs {
    // Look at where `Importer.importAll` calls `progress`: once every copy is done, or each
    // time one is? And can the loop that reports run while later photos still wait for a slot?
    // Lesson: "Progress as it happens".
    // Covers: C95
    @Test(
        "each copied photo is reported on the main actor before the next one ends, while later photos still wait for a slot"
    )
    func progressArrivesAsEachPhotoIsCopied() async {
        let names = ["a", "b", "c", "d"]
        let card = Card(holding: Set(names))
        defer { card.releaseAll() }
        let running = RunningImport(Importer(card: card, width: 2), names)
        let hint = lesson.see("Progress as it happens")
        let expected = names.indices.map { "\($0 + 1) of \(names.count)" }
        let waiting = { names.filter { !card.began.contains($0) } }
        guard
            await waitUntil(
                "two copies to begin", hint: hint, givingUpWhen: beyond(2, on: card),
                { card.running.count == 2 })
        else { return }
        // The copy that began last is released first: a report counts copies, in the order
        // they end, not the photo's place in the list. The first reports are due while two
        // photos still wait for a slot.
        for copied in names.indices {
            guard let name = card.running.last else { break }
            card.release(name)
            guard
                await waitUntil(
                    "progress to report \(expected[copied]) once \(name) was copied", timeout: patience,
                    hint: """
                        The card copied \(card.events.all.filter { $0.hasSuffix(" copied") }.map { String($0.dropLast(7)) }.joined(separator: ", ")), \
                        \(waiting().isEmpty ? "" : "\(waiting().joined(separator: " and ")) still waited for a slot, ")\
                        and progress reported \(running.progress.all.isEmpty ? "nothing" : running.progress.all.joined(separator: ", ")) \
                        (the import \(running.ending)). A progress bar that moves only at the end, or only \
                        once the last copy has a slot, is no progress bar: report each photo as the group \
                        hands it back, while other copies still wait. \(hint)
                        """,
                    { running.progress.count > copied })
            else { return }
        }
        guard await waitUntil("the import to end", hint: hint, { running.result != nil }) else { return }
        #expect(
            running.progress.all == expected,
            """
            Expected progress \(expected.joined(separator: ", ")), each on the main actor; it reported \
            \(running.progress.all.joined(separator: ", ")).
            \(hint)
            """)
    }

    // Look at how `Importer.importAll` hands each report to the main actor: does it wait for
    // the report to be delivered before it goes on, or send it off and carry on? Lesson:
    // "Progress as it happens".
    // Covers: C95
    @Test("importAll returns only once every report has reached the main actor, in order")
    func reportsArriveBeforeTheImportReturns() async {
        let names = ["a", "b", "c"]
        let card = Card()
        let hint = lesson.see("Progress as it happens")
        // The main actor is kept busy while every copy ends.
        let gate = Gate("the main actor")
        MainQueue.hold(until: gate) {}
        let running = RunningImport(Importer(card: card, width: 3), names)
        let copied = await comesTrue(within: patience) { names.allSatisfy { card.saw("\($0) copied") } }
        let returnedEarly = await comesTrue(within: window) { running.result != nil }
        gate.open()
        guard copied else {
            Issue.record("The card copied only \(card.events.timeline) while the main actor was busy. \(hint)")
            return
        }
        #expect(
            !returnedEarly,
            """
            The import \(running.ending) while the main actor was still busy, before any report \
            could reach it: the reports were sent off without waiting, so they arrive after the \
            import returned, or in any order. Await each report in the loop.
            \(hint)
            """)
        guard await waitUntil("the import to end", hint: hint, { running.result != nil }) else { return }
        await MainQueue.drain()
        #expect(
            running.progress.all == ["1 of 3", "2 of 3", "3 of 3"],
            """
            Expected progress 1 of 3, 2 of 3, 3 of 3, each on the main actor; it reported \
            \(running.progress.all.joined(separator: ", ")).
            \(hint)
            """)
    }
}
