import Chapter1
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("A stale total never replaces a newer one")
    @MainActor
    struct StaleResultSpecs {
        // Hint: results can arrive out of order. Remember which recalculation is the newest and
        // drop any result that comes from another one.
        // Covers: C3, C7
        @Test("a long sum that ends after a newer one does not overwrite it")
        func lateOldTotalIsDiscarded() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let screen = Recorder<Redraw>()
            let adder = ListAdder(numbers: [1, 2, 3], probe: driver.probe)
            adder.draw(into: screen)

            adder.add(4)  // run 1: [1, 2, 3, 4], held at its last number
            driver.pacer(1).allow(3)
            await waitUntil("run 1 to reach its last number") { driver.pacer(1).arrivals == 4 }

            adder.add(5)  // run 2: [1, 2, 3, 4, 5], runs to the end
            driver.pacer(2).releaseAll()
            await waitUntil("the screen to show 15, the total of run 2") { screen.contains { $0.text == "15" } }

            driver.pacer(1).releaseAll()  // run 1 finishes last
            await waitUntil("the result of run 1 to reach the list's owner") { driver.wasDelivered(1) }
            await MainQueue.drain()

            let shown = screen.all.map(\.text)
            #expect(
                shown.last == "15" && adder.formattedTotal == "15",
                """
                Run 1 (for [1, 2, 3, 4]) finished after run 2 (for [1, 2, 3, 4, 5]). Expected the \
                screen to keep 15; it showed \(shown) and ends on “\(adder.formattedTotal)”.
                \(lesson.see("Never let a stale total win"))
                """
            )
        }
    }
}
