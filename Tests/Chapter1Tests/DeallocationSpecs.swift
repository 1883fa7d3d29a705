import Chapter1
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("The screen's model is released where its owner lets go of it")
    @MainActor
    struct DeallocationSpecs {
        // Hint: ListAdder, "Release the model on the main queue". Which closure or thread holds
        // the model strongly while a sum runs? And once the model is gone, who needs its sum?
        // Covers: C10, C4
        // Paths: memory
        @Test("dropping the model while a sum runs releases it at once, on the main queue, and stops the sum")
        func modelIsReleasedOnTheMainQueue() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let releases = Recorder<Bool>()
            var adder: ListAdder? = ListAdder(numbers: [1, 2], probe: driver.probe)
            adder?.onRelease = { releases.record(MainQueue.isCurrent) }

            adder?.add(3)  // run 1: [1, 2, 3], held at its first number
            await waitUntil("run 1 to start adding") { driver.pacer(1).arrivals == 1 }
            adder = nil  // the screen goes away while the sum is running
            // The screen held the only strong reference: the model goes now, while run 1 is still held.
            let releasedWhileSumRan = await comesTrue(within: Bound.scaled(.milliseconds(500))) {
                releases.count > 0
            }
            driver.releaseAll()

            await waitUntil("the model to be released", hint: lesson.see("Release the model on the main queue")) {
                releases.count > 0
            }
            #expect(
                releasedWhileSumRan,
                """
                The screen let go of the model while run 1 was held at its first number, yet the \
                model stayed alive until the sum was let go: the background work held a strong \
                reference, and became the model's last owner.
                \(lesson.see("Release the model on the main queue"))
                """
            )
            #expect(
                releases.all == [true],
                """
                The model was released off the main queue: the background work held the last \
                reference, so deinit (and the screen's teardown) ran on its thread.
                \(lesson.see("Release the model on the main queue"))
                """
            )
            let stopped = await waitUntil("run 1 to stop", hint: "Events: \(driver.events.timeline)") {
                driver.numbersAdded(by: 1) != nil
            }
            guard stopped else { return }
            let added = driver.numbersAdded(by: 1) ?? 0
            #expect(
                added < 3,
                """
                The model was released while run 1 was at its first number, yet run 1 went on to \
                add all \(added) numbers. Nobody can show its total any more: releasing the model \
                should cancel the work it started.
                Events: \(driver.events.timeline)
                \(lesson.see("Release the model on the main queue"))
                """
            )
        }
    }
}
