import Chapter1
import Foundation
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("Work whose result nobody will use stops early")
    struct CancellationSpecs {
        /// The change to the list that makes the running sum pointless.
        enum NewerChange: String, CaseIterable, CustomTestStringConvertible, Sendable {
            case adding = "adding a number"
            /// The removal supersedes the running sum; the addition after it (which supersedes
            /// the removal's own sum) gives the list its length back before the old sum reads
            /// on, so that code still reading the live list does not crash here: the copy
            /// specs judge that.
            case removing = "removing a number, then adding one"

            var testDescription: String { rawValue }

            @MainActor
            func apply(to adder: ListAdder) {
                switch self {
                case .adding:
                    adder.add(5)
                case .removing:
                    adder.remove(at: 0)
                    adder.add(5)
                }
            }
        }

        // Hint: ListAdder, "Cancel work nobody will use". The owner holds on to the running
        // operation; whenever the list changes again, by an addition or a removal, it cancels
        // that operation before starting a new one.
        // Covers: C4, C7
        @Test(
            "a recalculation that a newer change supersedes stops before its end, and changes nothing",
            arguments: NewerChange.allCases)
        @MainActor
        func supersededSumStops(by change: NewerChange) async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let screen = Recorder<Redraw>()
            let adder = ListAdder(numbers: [1, 2, 3], probe: driver.probe)
            adder.draw(into: screen)

            adder.add(4)  // run 1: four numbers
            driver.pacer(1).allow(1)
            await waitUntil("run 1 to reach its second number") { driver.pacer(1).arrivals == 2 }
            change.apply(to: adder)  // makes run 1 pointless; the newer runs wait at their first number
            driver.pacer(1).releaseAll()

            guard await driver.resultReachedOwner(run: 1) else { return }
            await MainQueue.drain()
            let added = driver.numbersAdded(by: 1) ?? 0
            #expect(
                added < 4,
                """
                Run 1 was superseded at its second number, by \(change.rawValue), but still \
                added all \(added) numbers. Its result will be thrown away, so it should have \
                been cancelled and stopped, whichever way the list changed.
                Events: \(driver.events.timeline)
                \(lesson.see("Cancel work nobody will use"))
                """
            )
            #expect(
                screen.count == 0 && adder.isRecalculating,
                """
                Run 1 was superseded, by \(change.rawValue), while a newer run was still adding up. \
                Expected the screen to stay as it was, spinner on; it redrew \
                \(screen.all.map(\.text)) and isRecalculating is \(adder.isRecalculating). Only \
                the newest recalculation's result may change the model.
                \(lesson.see("Cancel work nobody will use"))
                """
            )
        }

        // Hint: AdderOperation.main(), "Cancel work nobody will use". cancel() sets a flag that
        // nobody acts on unless the loop looks at it.
        // Covers: C6, C50
        @Test("a cancelled adder stops at the next number and reports no total")
        func cancelledAdderStopsAtTheNextCheck() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let adder = AdderOperation(numbers: [1, 2, 3, 4, 5], run: 1, probe: driver.probe)
            let queue = OperationQueue()
            queue.addOperation(adder)

            driver.pacer(1).allow(2)
            await waitUntil("the adder to reach its third number") { driver.pacer(1).arrivals == 3 }
            adder.cancel()
            driver.releaseAll()
            await waitUntil("the cancelled adder to finish") { adder.isFinished }

            let added = driver.numbersAdded(by: 1) ?? 0
            #expect(
                added <= 3,
                """
                The adder was cancelled at its third number but went on to add \(added) of 5.
                \(lesson.see("Cancel work nobody will use"))
                """
            )
            #expect(
                adder.formattedTotal == nil,
                """
                A cancelled adder has no meaningful total, yet it reports “\(adder.formattedTotal ?? "")”.
                \(lesson.see("Cancel work nobody will use"))
                """
            )
        }
    }
}
