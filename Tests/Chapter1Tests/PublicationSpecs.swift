import Chapter1
import Foundation
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("An operation's results mean something only once it has finished")
    struct PublicationSpecs {
        // Hint: keep the running total in a local variable; store the result once, at the end,
        // behind a lock so that any thread may read it.
        // Covers: C5, C8
        @Test("an adder's total stays empty until it has finished")
        func totalIsPublishedOnlyWhenFinished() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let adder = AdderOperation(numbers: [1, 2, 3], run: 1, probe: driver.probe)
            let queue = OperationQueue()
            queue.addOperation(adder)

            driver.pacer(1).allow(2)
            await waitUntil("the adder to reach its last number") { driver.pacer(1).arrivals == 3 }
            let early = (adder.total, adder.formattedTotal)
            #expect(
                early.0 == nil && early.1 == nil,
                """
                Halfway through, the adder already reported total \(String(describing: early.0)) \
                and “\(early.1 ?? "")”. A reader cannot tell a partial total from a real one: \
                results must appear only when the operation has finished.
                \(lesson.see("Publish results only when finished"))
                """
            )

            driver.releaseAll()
            await waitUntil("the adder to finish") { adder.isFinished }
            #expect(adder.total == 6, "Expected the finished adder's total to be 6 for [1, 2, 3].")
            #expect(adder.formattedTotal == "6", "Expected the finished adder to format its total as “6”.")
        }
    }
}
