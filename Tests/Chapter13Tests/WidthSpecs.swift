import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("At most width copies at once, at the caller's priority", .watched)
struct WidthSpecs {
    // Look at how many child tasks `Importer.importAll` gives its task group at once, and when
    // it gives it the next one; and at which priority the copies run, asked for from the lowest
    // priority and from a high one. Lesson: "A width is yours to keep".
    // Covers: C94, C99
    // Paths: values
    @Test(
        "no more copies run at once than the width; the next starts as one ends; photos come back in order, at the caller's priority",
        arguments: [(1, TaskPriority.background), (3, TaskPriority.high), (10, TaskPriority.userInitiated)])
    func copiesStayWithinTheWidth(_ width: Int, _ priority: TaskPriority) async {
        // At least two photos more than the width, so that copies wait for a slot; asked for in
        // reverse alphabetical order, so that photos sorted by name are not the order asked.
        let names = (0..<max(5, width + 2)).reversed().map { String(UnicodeScalar(UInt8(ascii: "a") + UInt8($0))) }
        let card = Card(holding: Set(names))
        defer { card.releaseAll() }
        // The caller awaits the import, which raises a task of lower priority to its own
        // (SE-0304): from the lowest priority, a priority set by hand or a detached task's shows.
        let running = RunningImport(Importer(card: card, width: width), names, priority: priority)
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
            running.ending == "returned \(names.joined(separator: ", "))",
            """
            The copies ended in another order than they were asked in; expected the import to \
            return the photos in the order asked, \(names.joined(separator: ", ")), whatever order \
            they ended in and whatever their names. It \(running.ending). Keep each photo at the \
            index it was asked for, and return them in that order.
            \(lesson.see("The pattern"))
            """)
        let priorities = card.priorities.filter { $0.value != priority }
        #expect(
            priorities.isEmpty,
            """
            The import was asked for from a task of priority \(priority), but \
            \(priorities.keys.sorted().map { "\($0) was copied at \(priorities[$0]!)" }.joined(separator: ", ")). \
            Child tasks inherit their parent's priority, and Task { } its creator's; a detached \
            task, or a task given a priority of its own, does not run at the caller's.
            \(lesson.see("Priority comes with the task tree"))
            """)
        #expect(card.peak <= width, "With a width of \(width), \(card.peak) copies ran at once. \(hint)")
    }

    // Look at where the width lives: in each import, or in the importer that every import
    // shares, as a queue's width does? Lesson: "A width is yours to keep".
    // Covers: C94
    // Paths: interference
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

    // Look at what happens to a slot given back while a copy waits for one: is it handed to that
    // copy, or freed for whoever asks first? An actor may run a more urgent task's call before
    // the woken copy's. Lesson: "A width is yours to keep".
    // Covers: C94
    // Paths: interference, values
    @Test("a background import and an urgent one never run more copies at once than the width, round after round")
    func urgentImportKeepsTheWidth() async {
        let hint = lesson.see("A width is yours to keep")
        // Each round starts an urgent import while a background one hands its slots on from copy
        // to copy; copies suspend a few times while they copy, so that copies overlap. A slot
        // counted free before its waiter runs broke the width by round 11 in each of 10 runs with
        // the other core busy.
        let rounds = 60
        for round in 1...rounds {
            let card = Card(steps: 5)
            let importer = Importer(card: card, width: 2)
            let background = RunningImport(importer, (1...60).map { "b\($0)" }, priority: .background)
            guard
                await waitUntil(
                    "round \(round)'s first copies to begin", hint: hint,
                    { card.began.count >= 5 || background.result != nil })
            else { return }
            let urgent = RunningImport(importer, (1...30).map { "u\($0)" }, priority: .userInitiated)
            guard
                await waitUntil(
                    "round \(round)'s imports to end", hint: hint,
                    { background.result != nil && urgent.result != nil })
            else { return }
            guard card.peak <= 2 else {
                Issue.record(
                    """
                    In round \(round) of \(rounds), an importer of width 2 ran \(card.peak) copies at once, while a \
                    background import and an urgent one shared it. The width holds for every import at \
                    every priority. If it holds in the other specs, look at a slot given back while a copy \
                    waits: it belongs to that copy. If giveBack() counts it free and the woken copy takes \
                    it only once it runs again, a copy that asks in between takes it first, and both copy.
                    \(hint)
                    """)
                return
            }
        }
    }

    // Look at what happens to a slot each time a copy ends: copied, skipped, failed or
    // cancelled, while it waits or while it copies. Every path gives back exactly the slot it
    // took, and only a slot it took. Lesson: "A width is yours to keep".
    // Covers: C94, C96, C98
    // Paths: reuse
    @Test("the width holds through every handover, and after an import that was cancelled and one that failed")
    func widthOutlivesEveryEnding() async {
        // The first import's copies have gone too far to stop once begun: a cancel then reaches
        // only the copy still waiting for a slot.
        let card = Card(
            holding: ["b1", "b2", "b3", "b4", "c1", "c2", "c3", "c4"], stubborn: ["a1", "a2", "a3", "a4"])
        defer { card.releaseAll() }
        let importer = Importer(card: card, width: 2)
        let hint = lesson.see("A width is yours to keep")

        /// Waits until exactly two of `names` copy at once, and watches that no third begins.
        func twoAtOnce(_ names: [String], _ moment: String) async -> Bool {
            let underWay = { card.running.filter(names.contains) }
            guard
                await waitUntil(
                    "two copies of \(names.joined(separator: ", ")) to run at once \(moment)", timeout: patience,
                    hint: """
                        \(underWay().count) of them ran (the card saw \(card.events.timeline)). A slot \
                        that a copy took and never gave back is lost to every later import. \(hint)
                        """,
                    givingUpWhen: { underWay().count > 2 ? "\(underWay().joined(separator: ", ")) ran at once" : nil },
                    { underWay().count == 2 })
            else { return false }
            let extra = await comesTrue(within: window) { underWay().count > 2 }
            #expect(
                !extra,
                """
                With a width of 2, \(underWay().joined(separator: ", ")) ran at once \(moment): a slot \
                was given back twice, or by a copy that never had it. The card saw \(card.events.timeline).
                \(hint)
                """)
            return !extra
        }

        // Handovers: each copy that ends hands its slot to the next waiting one.
        let first = RunningImport(importer, ["a1", "a2", "a3", "a4"])
        guard await twoAtOnce(["a1", "a2", "a3", "a4"], "at first") else { return }
        card.release(card.running[0])
        guard await twoAtOnce(["a1", "a2", "a3", "a4"], "after the first handover") else { return }
        // Cancelled with two copies under way and one waiting for a slot: the waiting one ends
        // first (a short while is given for that), then the two under way end as well.
        first.task.cancel()
        _ = await comesTrue(within: Bound.scaled(.milliseconds(100))) { false }
        card.running.filter { $0.hasPrefix("a") }.forEach(card.release)
        guard await waitUntil("the first import to end once cancelled", hint: hint, { first.result != nil })
        else { return }
        // The next import gets the whole width, and no more.
        let second = RunningImport(importer, ["b1", "b2", "b3", "b4"])
        guard await twoAtOnce(["b1", "b2", "b3", "b4"], "after an import was cancelled") else { return }
        // One copy fails: the one under way is cancelled, and the waiting ones get slots they
        // must give back without copying.
        card.fail(card.running.first { $0.hasPrefix("b") }!)
        guard await waitUntil("the second import to end once a copy failed", hint: hint, { second.result != nil })
        else { return }
        let third = RunningImport(importer, ["c1", "c2", "c3", "c4"])
        guard await twoAtOnce(["c1", "c2", "c3", "c4"], "after an import failed") else { return }
        card.releaseAll()
        await waitUntil("the third import to end", hint: hint) { third.result != nil }
        #expect(third.ending == "returned c1, c2, c3, c4", "The third import \(third.ending). \(hint)")
    }

    // Look at where the importer gets the priority its copies run at: from the task that asks
    // for each import, or once, from the first caller? And does its width hold for the first
    // import? Lessons: "Priority comes with the task tree", "A width is yours to keep".
    // Covers: C99, C94
    // Paths: values, reuse
    @Test(
        "one importer serves callers of two priorities, one at a time within its width: each import's copies run at its own caller's"
    )
    func eachImportRunsAtItsCallersPriority() async {
        let card = Card(holding: ["u1", "u2"])
        defer { card.releaseAll() }
        let importer = Importer(card: card, width: 1)
        let hint = lesson.see("Priority comes with the task tree")
        let urgent = RunningImport(importer, ["u1", "u2"], priority: .high)
        guard
            await waitUntil(
                "a copy of the import asked for at high priority to begin", hint: hint,
                givingUpWhen: beyond(1, on: card), { card.running.count == 1 })
        else { return }
        let extra = await comesTrue(within: window) { card.peak > 1 }
        #expect(
            !extra,
            "With a width of 1, \(card.peak) copies ran at once (\(card.began.joined(separator: ", ")) began). \(lesson.see("A width is yours to keep"))"
        )
        card.releaseAll()
        guard await waitUntil("the import asked for at high priority to end", hint: hint, { urgent.result != nil })
        else { return }
        let background = RunningImport(importer, ["b1", "b2"], priority: .background)
        guard
            await waitUntil(
                "the import asked for at background priority to end", hint: hint, { background.result != nil })
        else { return }
        let expected: [String: TaskPriority] = ["u1": .high, "u2": .high, "b1": .background, "b2": .background]
        let priorities = card.priorities
        let wrong = expected.keys.sorted().filter { priorities[$0] != expected[$0] }
        #expect(
            wrong.isEmpty && urgent.ending == "returned u1, u2" && background.ending == "returned b1, b2",
            """
            One importer served an import asked for at high priority, then one asked for at \
            background priority; \(wrong.map { "\($0) was copied at \(priorities[$0].map { "\($0)" } ?? "no priority")" }.joined(separator: ", ")) \
            (the imports \(urgent.ending) and \(background.ending)). Each import's copies run at the \
            priority of the task that asked for that import: a priority kept by the importer, or \
            taken from its first caller, serves no other caller.
            \(hint)
            """)
    }

    // Look at where a new import's task gets its priority while another import copies beside
    // it: from the task that asks for it, or from an import the importer already runs? The first
    // import's copy is held until one of the second's has begun, so the second import is asked
    // for, made and run while the first is under way. Lessons: "Priority comes with the task
    // tree", "A width is yours to keep".
    // Covers: C99, C94
    // Paths: values, interference
    @Test(
        "an import asked for at background priority while one asked for at high priority copies beside it copies at background, within the width"
    )
    func importBesideAnotherKeepsItsOwnPriority() async {
        let card = Card(holding: ["u1", "b1", "b2"])
        defer { card.releaseAll() }
        let importer = Importer(card: card, width: 2)
        let hint = lesson.see("Priority comes with the task tree")
        let urgent = RunningImport(importer, ["u1"], priority: .high)
        guard
            await waitUntil(
                "the copy of u1, asked for at high priority, to begin", hint: hint,
                givingUpWhen: beyond(2, on: card), { card.saw("u1 began") })
        else { return }
        let background = RunningImport(importer, ["b1", "b2"], priority: .background)
        guard
            await waitUntil(
                "a copy of the import asked for at background priority to begin in the second slot while u1 copies",
                hint: hint, givingUpWhen: beyond(2, on: card), { card.running.count == 2 })
        else { return }
        guard !(await comesTrue(within: window) { card.peak > 2 }) else {
            Issue.record(
                "With a width of 2, \(card.began.joined(separator: ", ")) ran at once. \(lesson.see("A width is yours to keep"))"
            )
            return
        }
        card.releaseAll()
        guard
            await waitUntil("both imports to end", hint: hint, { urgent.result != nil && background.result != nil })
        else { return }
        let priorities = card.priorities
        let seen = ["u1", "b1", "b2"].map { "\($0) at \(priorities[$0].map { "\($0)" } ?? "no priority")" }
        #expect(
            priorities["u1"] == .high && priorities["b1"] == .background && priorities["b2"] == .background
                && urgent.ending == "returned u1" && background.ending == "returned b1, b2",
            """
            With a width of 2, an import asked for at high priority copied u1, and while it did, an \
            import of b1 and b2 was asked for at background priority and began to copy beside it; the \
            card saw \(seen.joined(separator: ", ")), and the imports \(urgent.ending) and \
            \(background.ending). Each import's copies run at the priority of the task that asked for \
            that import: a priority taken from an import under way belongs to another caller.
            \(hint)
            """)
    }

    // Look at where a new import's task gets its priority while another import is under way:
    // from the task that asks for it, or from an import the importer already runs? Lessons:
    // "Priority comes with the task tree", "A width is yours to keep".
    // Covers: C99, C94
    // Paths: values, interference
    @Test(
        "an import asked for at background priority while one asked for at high priority is under way copies at background, in the slot the other gives back"
    )
    func importsUnderWayKeepTheirOwnPriorities() async {
        let card = Card(holding: ["u1", "b1"])
        defer { card.releaseAll() }
        let importer = Importer(card: card, width: 1)
        let hint = lesson.see("Priority comes with the task tree")
        let urgent = RunningImport(importer, ["u1"], priority: .high)
        guard
            await waitUntil(
                "the copy of u1, asked for at high priority, to begin", hint: hint,
                givingUpWhen: beyond(1, on: card), { card.saw("u1 began") })
        else { return }
        // Asked for from the lowest priority while u1 still copies; nothing awaits this import
        // from a higher priority, so nothing may raise it. Its copy waits for u1's slot.
        let background = RunningImport(importer, ["b1"], priority: .background)
        guard !(await comesTrue(within: window) { card.peak > 1 }) else {
            Issue.record(
                "With a width of 1, \(card.began.joined(separator: " and ")) ran at once. \(lesson.see("A width is yours to keep"))"
            )
            return
        }
        card.release("u1")
        guard
            await waitUntil(
                "the copy of b1, asked for at background priority, to begin in the slot u1 gave back", hint: hint,
                givingUpWhen: beyond(1, on: card), { card.saw("b1 began") })
        else { return }
        card.releaseAll()
        guard
            await waitUntil("both imports to end", hint: hint, { urgent.result != nil && background.result != nil })
        else { return }
        let priorities = card.priorities
        let seen = ["u1", "b1"].map { "\($0) at \(priorities[$0].map { "\($0)" } ?? "no priority")" }
        #expect(
            priorities["u1"] == .high && priorities["b1"] == .background && urgent.ending == "returned u1"
                && background.ending == "returned b1",
            """
            An import asked for at high priority copied u1, and while it did, an import of b1 was \
            asked for at background priority; the card saw \(seen.joined(separator: " and ")), and the \
            imports \(urgent.ending) and \(background.ending). Each import's copies run at the \
            priority of the task that asked for that import, also while another import runs: a \
            priority taken from an import under way belongs to another caller.
            \(hint)
            """)
    }
}
