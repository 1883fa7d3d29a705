import Chapter1
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("A stale total never replaces a newer one")
    @MainActor
    struct StaleResultSpecs {
        // Hint: ListAdder, "Never let a stale total win". Results can arrive in any order.
        // Remember which recalculation is the newest, and drop a result from any other one,
        // even one for a list of the same length.
        // Covers: C3, C7
        // Paths: reuse, interference
        @Test("a long sum that ends after a newer one does not overwrite it")
        func lateOldTotalIsDiscarded() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let screen = Recorder<Redraw>()
            let adder = ListAdder(numbers: [1, 2, 3], probe: driver.probe)
            adder.draw(into: screen)

            adder.add(4)  // run 1: [1, 2, 3, 4], held at its last number
            driver.pacer(1).allow(3)
            guard
                await driver.waitDuringRun(
                    1, until: "run 1 to reach its last number", { driver.pacer(1).arrivals == 4 })
            else { return }

            adder.remove(at: 0)  // run 2: [2, 3, 4]
            adder.add(5)  // run 3: [2, 3, 4, 5], as many numbers as run 1 had
            driver.pacer(2).releaseAll()
            driver.pacer(3).releaseAll()
            // A queue that runs one sum at a time starts run 3 only once run 1 has stopped: no
            // newer sum can end first there, and run 1's result arrives first instead.
            let overtakes = await comesTrue(within: Bound.scaled(.milliseconds(500))) {
                driver.pacer(3).arrivals > 0
            }
            if overtakes {
                await waitUntil(
                    "the results of runs 2 and 3 to reach the list's owner, and the screen to show 14",
                    hint: """
                        Report .delivered(run:) for every result that comes back to the main queue, \
                        also a cancelled or stale one. Events: \(driver.events.timeline)
                        \(lesson.see("Never let a stale total win"))
                        """
                ) { driver.wasDelivered(2) && driver.wasDelivered(3) && screen.contains { $0.text == "14" } }
            }

            driver.pacer(1).releaseAll()  // run 1 finishes last, or lets run 3 start
            guard await driver.resultReachedOwner(run: 1) else { return }
            if !overtakes {
                await waitUntil("the screen to show 14, the total of run 3", hint: "Events: \(driver.events.timeline)")
                {
                    screen.contains { $0.text == "14" }
                }
            }
            await MainQueue.drain()

            let shown = screen.all.map(\.text)
            #expect(
                shown == ["14"] && adder.formattedTotal == "14",
                """
                Run 1 (for [1, 2, 3, 4]) finished \(overtakes ? "after" : "before") run 3 (for \
                [2, 3, 4, 5]), a list of the same length. Expected the screen to show only 14; it \
                showed \(shown) and ends on “\(adder.formattedTotal)”.
                \(lesson.see("Never let a stale total win"))
                """
            )
        }

        // Hint: ListAdder, "Never let a stale total win". Cancelling the old sum is not enough:
        // it may already have finished. Decide on the main queue, when the result arrives, and
        // not by the list's length: the list changed to another of the same length.
        // Covers: C3, C7
        // Paths: interference, values
        @Test("a result that reaches the main queue after the list changed again, to as many numbers, is not shown")
        func resultForAnOldListIsNotShown() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let screen = Recorder<Redraw>()
            let adder = ListAdder(numbers: [1, 2, 3], probe: driver.probe)
            adder.draw(into: screen)
            driver.pacer(1).releaseAll()

            adder.add(4)  // run 1: [1, 2, 3, 4], free to finish
            // Keep the main queue busy until run 1 has finished: its result cannot reach the
            // main queue before the list changes again.
            let giveUp = ContinuousClock.now + Bound.standard
            var finished: ContinuousClock.Instant?
            while ContinuousClock.now < giveUp {
                if finished == nil, driver.stoppedCount > 0 {
                    finished = ContinuousClock.now + Bound.scaled(.milliseconds(50))
                }
                if let finished, ContinuousClock.now >= finished { break }
            }
            adder.remove(at: 0)  // run 2: [2, 3, 4]
            adder.add(5)  // run 3: [2, 3, 4, 5], as many numbers as run 1 had
            guard await driver.resultReachedOwner(run: 1) else { return }
            await MainQueue.drain()
            let shownEarly = screen.all.map(\.text)

            driver.releaseAll()
            await waitUntil("the screen to show 14, the total of run 3") { screen.contains { $0.text == "14" } }
            await MainQueue.drain()
            let shown = screen.all.map(\.text)
            #expect(
                shownEarly.isEmpty && shown == ["14"],
                """
                Run 1 (for [1, 2, 3, 4]) had finished, but its result reached the main queue \
                only after the list became [2, 3, 4, 5], which has as many numbers. Expected the \
                screen to skip it and show only 14; it showed \(shownEarly) before run 3 ended, \
                \(shown) in all. A result is stale when it arrives, whatever it was when it ended, \
                and a list's length tells no list from another.
                \(lesson.see("Never let a stale total win"))
                """
            )
        }
    }
}
