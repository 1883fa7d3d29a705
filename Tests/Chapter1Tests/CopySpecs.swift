import Chapter1
import Foundation
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("A sum works on the numbers it started with")
    struct CopySpecs {
        // Hint: ListAdder and AdderOperation, "Give the work its own copy". This runs in a child
        // process because the bug it looks for crashes: where does a sum read its numbers from?
        // Covers: C2, C5
        // Paths: reuse
        @Test("removing numbers while a sum runs cannot crash it")
        func shrinkingTheListDuringASumIsSafe() async {
            let outcome = await #expect(
                processExitsWith: .success,
                """
                The app crashed (or showed the wrong total) when numbers were removed while a sum \
                was running. A sum that counts the live list and then reads it number by number \
                runs off its end when the list shrinks.
                \(lesson.see("Give the work its own copy"))
                """
            ) {
                await ShrinkingListScenario.run()
            }
            LastWords.explain(outcome)
        }
    }
}

extension Chapter1Specs.CopySpecs {
    // Hint: ListAdder and AdderOperation, "Give the work its own copy". A sum that reads the
    // model's list races with the main queue's next edit, even when it checks isCancelled first.
    // Covers: C2, C3
    // Paths: reuse
    @Test("edits that land while the previous sum is reading end on the right total, shown on the main queue")
    @MainActor
    func editsDuringSumsEndOnTheRightTotal() async {
        let driver = SumDriver(paced: false)
        let screen = Recorder<Redraw>()
        let adder = ListAdder(numbers: [], probe: driver.probe)
        adder.draw(into: screen)

        // Code that still reads the list from a thread of its own may crash in the burst below,
        // taking every other spec with it: try one edit first.
        adder.add(0)
        await waitUntil("the screen to show 0", hint: lesson.see("Show results on the main queue")) {
            screen.count > 0
        }
        guard let first = screen.all.first, first.onMainQueue else {
            Issue.record(
                """
                The first total came back off the main queue (\(screen.all.map(\.description))), so \
                the burst of edits was not tried. Fix “a new total changes the model and the screen \
                only on the main queue” first.
                \(lesson.see("Show results on the main queue"))
                """
            )
            return
        }

        // Each edit lands the moment the previous sum starts reading. The main queue does not
        // pause in between, so nothing orders the sum's reads before the next edit's writes.
        let giveUp = ContinuousClock.now + Bound.standard
        for number in 1...20 {
            adder.add(number)
            while driver.startedCount < number + 1 && ContinuousClock.now < giveUp {}
        }
        await waitUntil(
            "the screen to show 210, the total of 1…20",
            hint: "Redraws: \(screen.all.map(\.text)). \(lesson.see("Give the work its own copy"))"
        ) { screen.contains { $0.text == "210" } && !adder.isRecalculating }
        await MainQueue.drain()

        let shown = screen.all
        #expect(
            shown.last?.text == "210" && shown.allSatisfy(\.onMainQueue),
            """
            After 1…20 were added one by one, each while the sum before was reading, expected the \
            screen to end on 210, redrawn on the main queue; it showed \(shown.map(\.description)).
            \(lesson.see("Give the work its own copy"))
            """
        )
    }
}

/// The list shrinks from four numbers to one while the first sum is between numbers.
enum ShrinkingListScenario {
    @MainActor
    static func run() async {
        let driver = SumDriver()
        let screen = Recorder<Redraw>()
        let adder = ListAdder(numbers: [1, 2, 3], probe: driver.probe)
        adder.draw(into: screen)

        adder.add(4)  // run 1 adds up [1, 2, 3, 4]
        driver.pacer(1).allow(1)
        guard
            await driver.waitDuringRun(
                1, until: "run 1 to reach its second number", { driver.pacer(1).arrivals == 2 })
        else {
            exit(EXIT_FAILURE)
        }
        adder.remove(at: 3)
        adder.remove(at: 2)
        adder.remove(at: 1)  // runs 2, 3 and 4; the list is now [1]
        driver.releaseAll()

        let settled = await waitUntil("run 1 to stop and the screen to show the total of [1]") {
            driver.numbersAdded(by: 1) != nil && screen.all.last?.text == "1"
        }
        if !settled { exit(EXIT_FAILURE) }
    }
}
