import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("An order that must hold is a dependency, not a priority", .watched)
struct DependencySpecs {
    // A higher priority for the prerequisite does not stop a ready job from printing first.
    // Look at what PrintShop.submit does with `after:`.
    // Covers: C46, C44
    @Test("a rush job waits for its bulk proof, even while the proof waits for paper")
    func dependencyHoldsOnOnePress() async {
        let shop = PrintShop()
        let log = Recorder<String>()
        let paper = Delivery("paper arrived", into: log)

        shop.pause()
        let proof = shop.submit("proof", urgency: .bulk, after: [paper.operation]) {
            log.record("proof")
        }
        shop.submit("final run", urgency: .rush, after: [proof]) { log.record("final run") }
        shop.submit("sweep", urgency: .bulk) { log.record("sweep") }
        shop.resume()

        await waitUntil(
            "the sweep, the only ready job, to print first",
            hint: lesson.see("Priority is not an order: use a dependency")
        ) { log.contains("sweep") }
        paper.arrive()
        await waitUntil(
            "the final run to print after the paper and the proof",
            hint: lesson.see("Priority is not an order: use a dependency")
        ) { log.contains("final run") && log.contains("proof") }

        let expected = ["sweep", "paper arrived", "proof", "final run"]
        #expect(
            log.all == expected,
            """
            Expected \(expected.joined(separator: " → ")), but the shop did \(log.timeline). \
            Arrival order and priorities cannot hold a job back: only a dependency keeps the \
            proof waiting for its paper and the final run waiting for the proof.
            \(lesson.see("Priority is not an order: use a dependency"))
            """
        )
    }

    // The press is running and idle here, so it starts a job the moment it is added if the job
    // is ready then. Look at when PrintShop.submit adds the job's dependencies.
    // Covers: C46, C48
    @Test("on a running press, a job handed in before its paper arrived still waits for it")
    func dependencyHoldsOnARunningPress() async {
        // A dependency added to a job the press has already started can crash the process on
        // Linux, so the scenario runs in a child process of its own.
        let result = await #expect(
            processExitsWith: .success,
            observing: [\.standardOutputContent],
            """
            The shop crashed the process. On Linux that happens when a dependency is added to a \
            job the press has already started: a running press that is free starts a ready job \
            as soon as it is added, before any line after addOperation runs. Make the job \
            depend on its prerequisites before adding it.
            \(lesson.see("Configure before you enqueue"))
            """
        ) {
            await RunningPress.run()
        }
        guard let result else { return }
        let timeline = RunningPress.timeline(in: result.standardOutputContent)
        #expect(
            timeline == RunningPress.expected,
            """
            Expected \(RunningPress.expected.joined(separator: " → ")), but the shop did \
            \(timeline.isEmpty ? "(nothing)" : timeline.joined(separator: " → ")). A running \
            press that is free starts a ready job as soon as it is added, before any line after \
            addOperation runs: make the job depend on its prerequisites first.
            \(lesson.see("Configure before you enqueue"))
            """
        )
    }

    // The bindery is another queue: nothing set on the press can hold its jobs back, and its
    // jobs do not wait behind the press's. Only a dependency reaches across queues.
    // Covers: C45, C46
    // Paths: interference
    @Test("binding waits for a rush print job on another, busy press; bulk work there does not")
    func dependencyHoldsAcrossPresses() async {
        let printShop = PrintShop()
        let bindery = PrintShop()
        let log = Recorder<String>()
        let plates = HeldJob("plates on the press", log: log)
        printShop.press.addOperation(plates)
        await waitUntil("the plates to occupy the press") { log.contains("plates on the press") }

        let pages = printShop.submit("print the pages", urgency: .rush) {
            log.record("print the pages")
        }
        bindery.pause()
        bindery.submit("bind the book", urgency: .bulk, after: [pages]) {
            log.record("bind the book")
        }
        bindery.submit("sweep the bindery", urgency: .bulk) { log.record("sweep the bindery") }
        bindery.resume()

        await waitUntil(
            "the bindery's sweep to run while the rush pages waited on the busy press",
            hint: lesson.see("Priorities stay inside one queue"),
            givingUpWhen: { log.contains("bind the book") ? "the book was bound first" : nil }
        ) { log.contains("sweep the bindery") }
        plates.finish()
        await waitUntil(
            "the book to be bound after its pages were printed",
            hint: lesson.see("Priorities stay inside one queue")
        ) { log.contains("bind the book") && log.contains("print the pages") }

        let expected = ["plates on the press", "sweep the bindery", "print the pages", "bind the book"]
        #expect(
            log.all == expected,
            """
            Expected \(expected.joined(separator: " → ")), but the shops did \(log.timeline). \
            Each queue ranks only its own jobs: the rush pages waiting on the press hold back \
            nothing in the bindery, and no priority there can make the binding wait. A \
            dependency can, because it works across queues.
            \(lesson.see("Priorities stay inside one queue"))
            """
        )
    }
}

@Suite("A paused press holds back only its own jobs and those that depend on them", .watched)
struct PausedShopSpecs {
    // Two shops, each on its own press. Look at what PrintShop.pause() and resume() reach (this
    // shop's press only, or every press through a static list, of all presses or of those ever
    // paused, or a shared queue?), at what submit does with a prerequisite from the other shop,
    // and at anything every shop's jobs share while they print (a static lock or queue).
    // Covers: C45, C46
    // Paths: interference
    @Test(
        "pausing one shop holds back only the binding that depends on its pages; the bindery prints beside it"
    )
    func pauseStaysInItsShop() async {
        // In a process of its own: a list every shop shares would otherwise be paused and resumed
        // by the specs running beside this one, and decide its verdict.
        LastWords.forget(PausedShopSpecs.scenario)
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process that paused one of two shops stopped before it could judge.
            \(lesson.see("Priorities stay inside one queue"))
            """
        ) {
            await PausedShopSpecs.bindBesidePausedShop()
        }
        LastWords.explain(PausedShopSpecs.scenario, outcome)
    }

    // A shop is paused and resumed many times in its life, and not always in turn. Look at what
    // PrintShop.pause() and resume() do the second time, and twice in a row: does a flag set by
    // the first call stop the next one, does a call flip the press's state, or keep a tally?
    // Covers: C45
    // Paths: reuse, values
    @Test(
        "every pause() holds a shop's jobs back and every resume() prints them, again and twice in a row"
    )
    func pauseWorksEveryTime() async {
        let shop = PrintShop()
        let printed = Recorder<String>()
        shop.pause()
        shop.submit("first bulk", urgency: .bulk) { printed.record("first bulk") }
        shop.submit("first rush", urgency: .rush) { printed.record("first rush") }
        shop.resume()
        await waitUntil(
            "the first round's two jobs to print after the first resume()",
            hint: lesson.see("Priorities stay inside one queue")
        ) { printed.count == 2 }

        // Two pauses in a row hold the press once; one resume() lets it go.
        shop.pause()
        shop.pause()
        shop.submit("second bulk", urgency: .bulk) { printed.record("second bulk") }
        // An idle running press starts a ready job within milliseconds; a paused one never does.
        let printedWhilePaused = await comesTrue(within: Bound.scaled(.milliseconds(300))) {
            printed.contains("second bulk")
        }
        shop.submit("second rush", urgency: .rush) { printed.record("second rush") }
        shop.resume()
        await waitUntil(
            "the second round's two jobs to print after one resume() followed two pause() calls",
            hint: """
                isSuspended is a flag, not a count: one resume() lets the press go, however many \
                pauses came before it.
                \(lesson.see("Priorities stay inside one queue"))
                """,
            givingUpWhen: { shop.press.isSuspended ? "the press was still suspended after resume()" : nil }
        ) { printed.count == 4 }

        // A resume() on a running press leaves it running.
        shop.resume()
        shop.submit("third standard", urgency: .standard) { printed.record("third standard") }
        await waitUntil(
            "a job to print on a press resumed twice in a row",
            hint: lesson.see("Priorities stay inside one queue"),
            givingUpWhen: { shop.press.isSuspended ? "the press was suspended after a second resume()" : nil }
        ) { printed.count == 5 }

        let expected = ["first rush", "first bulk", "second rush", "second bulk", "third standard"]
        #expect(
            !printedWhilePaused,
            """
            Paused and resumed once, then paused twice in a row, the shop printed a job while it \
            was paused (in all it did \(printed.timeline)). Every pause() holds the shop's jobs \
            back, however often the shop was paused and resumed before: set the press's \
            isSuspended to true each time; keep no flag that lets only the first call through, and \
            never flip the press's state.
            \(lesson.see("Priorities stay inside one queue"))
            """
        )
        #expect(
            printed.all == expected,
            """
            Paused and resumed, paused twice and resumed once, then resumed again, the shop did \
            \(printed.timeline). Expected \(expected.joined(separator: " → ")): every resume() lets \
            the waiting jobs print, however many pause() calls came before it (isSuspended is a \
            flag, not a count), a resume() of a running press leaves it running, and the press \
            takes the most urgent ready job first each time.
            \(lesson.see("Priorities stay inside one queue"))
            """
        )
    }

    static let scenario = "chapter6-paused-shop"

    /// Pauses the print shop with the pages on its press, then hands the bindery, a second shop
    /// that was paused and resumed before, the binding (after the pages) and a ready sweep; then
    /// has the bindery print while the print shop's long run is on its press. Runs in an exit
    /// test, beside no other spec.
    static func bindBesidePausedShop() async {
        let printShop = PrintShop()
        let bindery = PrintShop()
        let log = Recorder<String>()
        // Shops are paused and resumed all day: a pause must not reach a shop that paused before.
        bindery.pause()
        bindery.resume()
        printShop.pause()
        let pages = printShop.submit("print the pages", urgency: .rush) { log.record("print the pages") }
        bindery.submit("bind the book", urgency: .bulk, after: [pages]) { log.record("bind the book") }
        bindery.submit("sweep the bindery", urgency: .bulk) { log.record("sweep the bindery") }
        let swept = await comesTrue(within: Bound.standard) { log.contains("sweep the bindery") }
        let early = log.all
        printShop.resume()
        guard swept else {
            LastWords.fail(
                scenario,
                """
                With the print shop paused, the bindery, a shop with a press of its own, never \
                printed its ready sweep (the shops did \(log.timeline)). The bindery had been \
                paused and resumed once before. A pause belongs to one shop: suspend this shop's \
                press only, never every press through a list (of all presses, or of those ever \
                paused) or a static that all shops share.
                \(lesson.see("Priorities stay inside one queue"))
                """
            )
        }
        _ = await comesTrue(within: Bound.standard) { log.contains("bind the book") }
        let expected = ["sweep the bindery", "print the pages", "bind the book"]
        if early != ["sweep the bindery"] || log.all != expected {
            LastWords.fail(
                scenario,
                """
                While the print shop was paused the shops did \(early.isEmpty ? "nothing" : early.joined(separator: " → ")); \
                in all they did \(log.timeline). Expected \(expected.joined(separator: " → ")): the \
                bindery sweeps at once, since the pause holds back only the print shop's own press, \
                and binds only after the pages, since the binding depends on them across the two \
                queues.
                \(lesson.see("Priorities stay inside one queue"))
                """
            )
        }

        // Two shops print at the same time: the print shop's long run holds no other press.
        let longRun = Gate("the print shop's long run")
        printShop.submit("long run", urgency: .bulk) {
            log.record("long run started")
            // Held past the bindery's bound, so that the bindery gets no help from its end.
            _ = longRun.wait(timeout: Bound.standard * 3)
        }
        let longRunStarted = await comesTrue(within: Bound.standard) { log.contains("long run started") }
        guard longRunStarted else {
            longRun.open()
            LastWords.fail(
                scenario,
                """
                Resumed, the print shop never started the long run it was handed next (the shops \
                did \(log.timeline)): every resume() lets the press print again.
                \(lesson.see("Priorities stay inside one queue"))
                """
            )
        }
        bindery.submit("trim the covers", urgency: .rush) { log.record("trim the covers") }
        let trimmed = await comesTrue(within: Bound.standard) { log.contains("trim the covers") }
        longRun.open()
        if !trimmed {
            LastWords.fail(
                scenario,
                """
                While the print shop's long run was on its press, the bindery, a shop with a press \
                of its own, never printed the covers it was handed (the shops did \
                \(log.timeline)). Each shop's press prints its own jobs, side by side with every \
                other shop's: a lock, a queue or any static that every shop's jobs share while \
                they print makes all the shops one press.
                \(lesson.see("Priorities stay inside one queue"))
                """
            )
        }
    }
}

/// The running-press scenario, run in a child process: a rush job handed to an idle, running
/// press before its paper arrived, then a ready bulk job.
enum RunningPress {
    /// What the shop must do.
    static let expected = ["sweep", "paper arrived", "final run"]

    private static let marker = "shop timeline: "

    /// Runs the scenario and writes what the shop did to standard output, on one marked line.
    static func run() async {
        let shop = PrintShop()
        let log = Recorder<String>()
        let paper = Delivery("paper arrived", into: log)
        let finalRun = shop.submit("final run", urgency: .rush, after: [paper.operation]) {
            log.record("final run")
        }
        shop.submit("sweep", urgency: .bulk) { log.record("sweep") }
        _ = await comesTrue(within: Bound.standard) { log.contains("sweep") || log.contains("final run") }
        paper.arrive()
        _ = await comesTrue(within: Bound.standard) { finalRun.isFinished }
        let line = "\n" + marker + log.all.joined(separator: "|") + "\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    /// The events `run()` reported in `output`.
    static func timeline(in output: [UInt8]) -> [String] {
        let text = String(decoding: output, as: UTF8.self)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix(marker) }) else { return [] }
        return line.dropFirst(marker.count).split(separator: "|").map(String.init)
    }
}
