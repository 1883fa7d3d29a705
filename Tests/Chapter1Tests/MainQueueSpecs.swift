import Chapter1
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("The screen is only ever updated on the main queue")
    @MainActor
    struct MainQueueSpecs {
        /// What the screen reads from the model: the total it shows and whether it shows a spinner.
        struct ModelState: Equatable, CustomStringConvertible {
            let total: String
            let spinning: Bool

            init(total: String, spinning: Bool) {
                self.total = total
                self.spinning = spinning
            }

            init(_ adder: ListAdder) {
                self.init(total: adder.formattedTotal, spinning: adder.isRecalculating)
            }

            var description: String { "“\(total)”\(spinning ? " with spinner" : "")" }
        }

        // Hint: ListAdder, "Show results on the main queue". The sum may run anywhere, but its
        // result goes to the main queue before it touches the model or calls onTotalChange.
        // Covers: C1, C9
        // Paths: collaborators
        @Test("a new total changes the model and the screen only on the main queue")
        func totalIsShownOnTheMainQueue() async {
            let driver = SumDriver(paced: false)
            let screen = Recorder<Redraw>()
            let adder = ListAdder(numbers: [1, 2], probe: driver.probe)
            adder.draw(into: screen)

            adder.add(3)
            // Keep the main queue busy reading the model until the sum has stopped and its
            // result has had time to travel. Nothing can run on the main queue meanwhile, so any
            // change seen here was made from another thread.
            var seen = [ModelState(adder)]
            let giveUp = ContinuousClock.now + Bound.standard
            var settled: ContinuousClock.Instant?
            while ContinuousClock.now < giveUp {
                let state = ModelState(adder)
                if state != seen.last { seen.append(state) }
                if settled == nil, driver.stoppedCount > 0 {
                    settled = ContinuousClock.now + Bound.scaled(.milliseconds(100))
                }
                if let settled, ContinuousClock.now >= settled { break }
            }
            #expect(
                seen.count == 1,
                """
                While the main queue was busy, the model changed under it: \
                \(seen.map(\.description).joined(separator: " → ")). formattedTotal and \
                isRecalculating are screen state: only the main queue may change them, or the \
                screen reads them half-updated (a data race).
                \(lesson.see("Show results on the main queue"))
                """
            )

            await waitUntil(
                "the screen to be told about the new total",
                hint: lesson.see("Show results on the main queue")
            ) { screen.count > 0 }
            guard let redraw = screen.all.first else { return }
            #expect(
                redraw.onMainQueue,
                """
                The screen redrew \(redraw), but the total must change on the main queue: UI state \
                changed from a background thread is a data race, and UIKit or AppKit may crash.
                \(lesson.see("Show results on the main queue"))
                """
            )
            #expect(redraw.text == "6", "Expected the screen to show 6 for [1, 2, 3]; it showed “\(redraw.text)”.")
            let final = ModelState(adder)
            #expect(
                final == ModelState(total: "6", spinning: false),
                """
                After the new total was shown, the model reads \(final); expected “6” and no \
                spinner (isRecalculating false).
                \(lesson.see("Show results on the main queue"))
                """
            )
        }
    }
}
