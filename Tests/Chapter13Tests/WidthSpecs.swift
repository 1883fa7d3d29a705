import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("At most width copies at once, at the caller's priority")
struct WidthSpecs {
    // Look at how many child tasks `Importer.importAll` gives its task group at once, and when
    // it gives it the next one. Lesson: "A width is yours to keep".
    // Covers: C94, C99
    @Test(
        "no more copies run at once than the width; the next starts as one ends; photos come back in order, at the caller's priority",
        arguments: [1, 3])
    func copiesStayWithinTheWidth(_ width: Int) async {
        let names = ["a", "b", "c", "d", "e"]
        let card = Card(holding: Set(names))
        defer { card.releaseAll() }
        let running = RunningImport(Importer(card: card, width: width), names, priority: .utility)
        let hint = lesson.see("A width is yours to keep")
        let tooMany = {
            card.peak > width ? "\(card.peak) copies ran at once (\(card.began.joined(separator: ", ")) began)" : nil
        }
        guard
            await waitUntil(
                "\(width) cop\(width == 1 ? "y" : "ies") to begin", hint: hint, givingUpWhen: tooMany,
                { card.running.count == width })
        else { return }
        let extra = await comesTrue(within: window) { card.peak > width }
        #expect(
            !extra,
            """
            With a width of \(width), \(card.peak) copies ran at once while none had ended: \
            \(card.began.joined(separator: ", ")) began. A task group runs every child it is given \
            at once; it has no width of its own.
            \(hint)
            """)
        // Release the oldest copy each time, but the later ones first when several run, so that
        // the copies end in another order than they were asked in.
        for ended in 1...names.count {
            guard let next = card.running.last else { break }
            card.release(next)
            let begun = min(names.count, width + ended)
            guard
                await waitUntil(
                    "the copy of \(next) to end and \(begun) copies in all to have begun", hint: hint,
                    givingUpWhen: tooMany, { !card.running.contains(next) && card.began.count >= begun })
            else { return }
        }
        guard await waitUntil("the import to end", hint: hint, { running.result != nil }) else { return }
        #expect(
            running.ending == "returned a, b, c, d, e",
            """
            The copies ended out of order; expected the import to return the photos in the order \
            asked, a, b, c, d, e. It \(running.ending).
            \(hint)
            """)
        let priorities = card.priorities.filter { $0.value != .utility }
        #expect(
            priorities.isEmpty,
            """
            The import was asked for from a task of priority utility, but \
            \(priorities.keys.sorted().map { "\($0) was copied at \(priorities[$0]!)" }.joined(separator: ", ")). \
            Child tasks inherit their parent's priority; a detached task starts from nothing.
            \(lesson.see("Priority comes with the task tree"))
            """)
        #expect(card.peak <= width, "With a width of \(width), \(card.peak) copies ran at once. \(hint)")
    }

    // Look at where the width lives: in each import, or in the importer that every import
    // shares, as a queue's width does? Lesson: "A width is yours to keep".
    // Covers: C94
    @Test("two imports at once share the importer's width")
    func importsShareTheWidth() async {
        let card = Card(holding: ["a1", "a2", "b1", "b2"])
        defer { card.releaseAll() }
        let importer = Importer(card: card, width: 2)
        let first = RunningImport(importer, ["a1", "a2"])
        let second = RunningImport(importer, ["b1", "b2"])
        let hint = lesson.see("A width is yours to keep")
        guard
            await waitUntil(
                "two copies to begin", hint: hint, givingUpWhen: beyond(2, on: card), { card.running.count == 2 })
        else { return }
        let extra = await comesTrue(within: window) { card.peak > 2 }
        #expect(
            !extra,
            """
            An importer of width 2 ran two imports, and \(card.peak) copies ran at once \
            (\(card.began.joined(separator: ", ")) began). The width is the importer's, shared by \
            every import, as a queue's width is shared by every operation added to it.
            \(hint)
            """)
        card.releaseAll()
        await waitUntil("both imports to end", hint: hint) { first.result != nil && second.result != nil }
        #expect(
            first.ending == "returned a1, a2" && second.ending == "returned b1, b2",
            "Both imports should return their photos; the first \(first.ending), the second \(second.ending). \(hint)")
    }
}
