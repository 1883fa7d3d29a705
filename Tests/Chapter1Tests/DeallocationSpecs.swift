import Chapter1
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("The screen's model is released where its owner lets go of it")
    @MainActor
    struct DeallocationSpecs {
        // Hint: ListAdder, "Release the model on the main queue". Which closure or thread holds
        // the model strongly while a sum runs?
        // Covers: C10
        @Test("dropping the model while a sum runs releases it on the main queue")
        func modelIsReleasedOnTheMainQueue() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let releases = Recorder<Bool>()
            var adder: ListAdder? = ListAdder(numbers: [1, 2], probe: driver.probe)
            adder?.onRelease = { releases.record(MainQueue.isCurrent) }

            adder?.add(3)
            await waitUntil("run 1 to start adding") { driver.pacer(1).arrivals == 1 }
            adder = nil  // the screen goes away while the sum is running
            driver.releaseAll()

            await waitUntil("the model to be released", hint: lesson.see("Release the model on the main queue")) {
                releases.count > 0
            }
            #expect(
                releases.all == [true],
                """
                The model was released off the main queue: the background work held the last \
                reference, so deinit (and the screen's teardown) ran on its thread.
                \(lesson.see("Release the model on the main queue"))
                """
            )
        }
    }
}
