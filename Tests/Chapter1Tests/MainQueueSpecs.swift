import Chapter1
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("The screen is only ever updated on the main queue")
    @MainActor
    struct MainQueueSpecs {
        // Hint: the sum may run anywhere, but the result must be handed back to the main queue
        // before it touches the model or the screen.
        // Covers: C1, C9
        @Test("a new total is shown on the main queue")
        func totalIsShownOnTheMainQueue() async {
            let driver = SumDriver(paced: false)
            let screen = Recorder<Redraw>()
            let adder = ListAdder(numbers: [1, 2], probe: driver.probe)
            adder.draw(into: screen)

            adder.add(3)

            await waitUntil(
                "the screen to be told about the new total",
                hint: lesson.see("Show results on the main queue")
            ) { screen.count > 0 }
            guard let redraw = screen.all.first else { return }
            #expect(
                redraw.onMainQueue,
                """
                The screen redrew \(redraw), but the total must change on the main queue: UI state \
                changed from a background thread is a data race, and UIKit or AppKit would crash.
                \(lesson.see("Show results on the main queue"))
                """
            )
            #expect(redraw.text == "6", "Expected the screen to show 6 for [1, 2, 3]; it showed “\(redraw.text)”.")
        }
    }
}
