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
    // Paths: collaborators
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
            // The next copy may begin only after the last report: an operation queue starts it
            // once the operation that ended has finished. Only the spec ends a copy.
            guard
                await waitUntil(
                    "copy number \(copied + 1) to be under way", hint: hint,
                    givingUpWhen: { running.result.map { _ in "the import \(running.ending)" } },
                    { !card.running.isEmpty })
            else { return }
            let name = card.running.last!
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

    // Look at what of `Importer.importAll` waits for the main actor: only each report, awaited
    // before the loop goes on, or also the import's start, its copies or the next child? The
    // spec keeps the main actor busy, in a process of its own so that no other spec waits for
    // it. Lesson: "Progress as it happens".
    // Covers: C95
    @Test(
        "while the main actor is busy the photos are still copied, and importAll returns only once every report has reached it, in order"
    )
    func reportsArriveBeforeTheImportReturns() async {
        let outcome = await #expect(
            processExitsWith: .success,
            "The child process that kept the main actor busy stopped before it could judge. \(lesson.see("Progress as it happens"))"
        ) {
            await ProgressSpecs.reportWhileTheMainActorIsBusy()
        }
        LastWords.explain(outcome)
    }

    /// Keeps the main actor busy while an import of four photos, two at a time, copies them all,
    /// then lets it go and looks at the reports.
    static func reportWhileTheMainActorIsBusy() async {
        let names = ["a", "b", "c", "d"]
        let card = Card()
        let hint = lesson.see("Progress as it happens")
        let held = HeldMainQueue()
        defer { held.release() }
        guard await held.begun() else { return }
        let running = RunningImport(Importer(card: card, width: 2), names)
        let copied = await comesTrue(within: patience) { names.allSatisfy { card.saw("\($0) copied") } }
        let returnedEarly = await comesTrue(within: window) { running.result != nil }
        let inForce = held.isInForce
        held.release()
        guard inForce else {
            Issue.record("\(HeldMainQueue.endedTooSoon)\n\(hint)")
            return
        }
        guard copied else {
            let done = names.filter { card.saw("\($0) copied") }
            Issue.record(
                """
                While the main actor was busy, the card copied \(done.isEmpty ? "nothing" : "only \(done.joined(separator: ", "))") \
                of \(names.joined(separator: ", ")) in \(patience.seconds) s (it saw \
                \(card.events.timeline.isEmpty ? "nothing" : card.events.timeline)), and the import \(running.ending). \
                Nothing but the report may wait for the main actor, which the screen needs as well: \
                the import starts, copies and hands its slots on while it is busy. An import whose \
                task or loop runs on the main actor waits for it before it even starts; a loop that \
                gives the group its next child only after the report makes every later copy wait \
                for the screen, and so does a window of children whose loop adds the next child \
                first but then awaits the report: while it waits, it sees no other child end.
                \(hint)
                """)
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
            running.progress.all == ["1 of 4", "2 of 4", "3 of 4", "4 of 4"],
            """
            Expected progress 1 of 4, 2 of 4, 3 of 4, 4 of 4, each on the main actor; it reported \
            \(running.progress.all.joined(separator: ", ")).
            \(hint)
            """)
    }

    // Look at where the importer keeps each import's progress callback: with that import, or in
    // one place every import shares? Lesson: "Progress as it happens".
    // Covers: C95
    // Paths: interference, collaborators
    @Test("two imports at once each report their own photos, in order, to their own callback")
    func twoImportsReportTheirOwnProgress() async {
        let card = Card(holding: ["a1", "a2", "b1", "b2", "b3"])
        defer { card.releaseAll() }
        let importer = Importer(card: card, width: 5)
        let hint = lesson.see("Progress as it happens")
        let first = RunningImport(importer, ["a1", "a2"])
        let second = RunningImport(importer, ["b1", "b2", "b3"])
        guard
            await waitUntil(
                "the five copies to begin", hint: hint, givingUpWhen: beyond(5, on: card),
                { card.running.count == 5 })
        else { return }
        // The copies end one at a time, the two imports' in turn; each report is awaited before
        // the next copy ends.
        let steps = [
            ("a1", first, "1 of 2"), ("b1", second, "1 of 3"), ("b2", second, "2 of 3"), ("a2", first, "2 of 2"),
            ("b3", second, "3 of 3"),
        ]
        for (name, running, report) in steps {
            card.release(name)
            let whose = running === first ? "first" : "second"
            guard
                await waitUntil(
                    "the \(whose) import to report \(report) once \(name) was copied", timeout: patience,
                    hint: """
                        The first import's callback got \(first.progress.all.isEmpty ? "nothing" : first.progress.all.joined(separator: ", ")), \
                        the second's \(second.progress.all.isEmpty ? "nothing" : second.progress.all.joined(separator: ", ")). \
                        Each import reports to the callback it was handed, however many imports run \
                        at once: keep the callback with its import, not on the importer. \(hint)
                        """,
                    { running.progress.all.contains(report) })
            else { return }
        }
        guard await waitUntil("both imports to end", hint: hint, { first.result != nil && second.result != nil })
        else { return }
        await MainQueue.drain()
        #expect(
            first.progress.all == ["1 of 2", "2 of 2"] && second.progress.all == ["1 of 3", "2 of 3", "3 of 3"]
                && first.ending == "returned a1, a2" && second.ending == "returned b1, b2, b3",
            """
            Two imports ran at once; expected the first to report 1 of 2, 2 of 2 and the second 1 of \
            3, 2 of 3, 3 of 3, each on the main actor. The first's callback got \
            \(first.progress.all.joined(separator: ", ")) and it \(first.ending); the second's got \
            \(second.progress.all.joined(separator: ", ")) and it \(second.ending).
            \(hint)
            """)
    }
}
