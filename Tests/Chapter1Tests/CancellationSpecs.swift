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
        // Paths: reuse, values
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
            guard
                await driver.waitDuringRun(
                    1, until: "run 1 to reach its second number", { driver.pacer(1).arrivals == 2 })
            else { return }
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

        // Hint: ListAdder, "Cancel work nobody will use". Two edits in one turn of the main
        // queue: the first one's sum has most likely not started when the second supersedes
        // it. Do you cancel the sum in progress whatever its state, or only one that runs?
        // Covers: C4, C7
        // Paths: reuse
        @Test("a recalculation superseded before it started adds nothing")
        @MainActor
        func supersededBeforeItStartsAddsNothing() async {
            // Whether run 1 has started when the second edit lands is up to the queue's thread:
            // most rounds it has not; a round in which it has judges nothing new.
            for round in 1...20 {
                let queueOfRun2 = Protected<WeakReference<OperationQueue>?>(nil)
                let driver = SumDriver()
                defer { driver.releaseAll() }
                let probe: @Sendable (SumEvent) -> Void = { event in
                    if case .willAdd(2, 0) = event {
                        queueOfRun2.withValue { $0 = WeakReference(OperationQueue.current) }
                    }
                    driver.probe(event)
                }
                let adder = ListAdder(numbers: [1, 2, 3], probe: probe)
                adder.add(4)  // run 1
                adder.add(5)  // run 2, in the same turn: run 1 is on the queue, most likely not started
                driver.releaseAll()
                guard await driver.resultReachedOwner(run: 2) else { return }
                // Run 1 has stopped, or its queue retired it without running it.
                guard
                    await waitUntil(
                        "run 1 to stop, or its queue to retire it", hint: "Events: \(driver.events.timeline)",
                        {
                            if driver.numbersAdded(by: 1) != nil { return true }
                            guard let queue = queueOfRun2.value?.value else { return false }
                            return !queue.operations.contains { ($0 as? AdderOperation)?.run == 1 }
                        })
                else { return }
                let added = driver.numbersAdded(by: 1) ?? 0
                guard added < 4 else {
                    Issue.record(
                        """
                        In round \(round), 5 was added right after 4, in the same turn of the main \
                        queue, so run 1 (for [1, 2, 3, 4]) was superseded before it had started. \
                        It still added \(added) numbers: only a running sum was cancelled. Cancel the \
                        sum in progress whatever its state: a queue retires a cancelled operation \
                        that has not started without running it.
                        Events: \(driver.events.timeline)
                        \(lesson.see("Cancel work nobody will use"))
                        """)
                    return
                }
                _ = adder
            }
        }

        // Hint: AdderOperation.main(), "Cancel work nobody will use". cancel() sets a flag that
        // nobody acts on unless the loop looks at it, before every number: the first, the last
        // and every one between.
        // Covers: C6, C50
        // Paths: values
        @Test(
            "a cancelled adder stops at the next number and reports no total, wherever the cancel lands",
            arguments: 0..<4)
        func cancelledAdderStopsAtTheNextCheck(cancelledAt position: Int) async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let adder = AdderOperation(numbers: [1, 2, 3, 4, 5], run: 1, probe: driver.probe)
            let queue = OperationQueue()
            queue.addOperation(adder)

            driver.pacer(1).allow(position)
            guard
                await driver.waitDuringRun(
                    1, until: "the adder to reach number #\(position)", { driver.pacer(1).arrivals == position + 1 })
            else { return }
            adder.cancel()  // while number #position is being added
            driver.releaseAll()
            await waitUntil("the cancelled adder to finish") { adder.isFinished }

            let added = driver.numbersAdded(by: 1) ?? 0
            let reached = driver.events.all.compactMap { event -> Int? in
                if case .willAdd(1, let index) = event { return index }
                return nil
            }
            #expect(
                added <= position + 1 && !reached.contains(position + 1),
                """
                The adder was cancelled while it added number #\(position) of [1, 2, 3, 4, 5], \
                yet it went on to number #\(position + 1) and added \(added) of 5 in all. The loop \
                looks at isCancelled before every number, so it stops at the next one.
                Events: \(driver.events.timeline)
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

        // Hint: AdderOperation.main(), "Cancel work nobody will use". A cancel may land after
        // the queue called start() and before main() reached its first number. Do you look at
        // the flag before each number, or only once a number is in?
        // Covers: C50, C6
        // Paths: values
        @Test("an adder cancelled as main() begins adds no number and reports no total")
        func cancelledAsMainBeginsAddsNothing() {
            let driver = SumDriver(paced: false)
            let adder = AdderOperation(numbers: [1, 2, 3], run: 1, probe: driver.probe)
            adder.cancel()
            // start() retires an operation cancelled before it without calling main(); one cancelled
            // between start() and main() finds the flag set as main() begins, as here.
            adder.main()

            let added = driver.numbersAdded(by: 1)
            let announced = driver.events.contains { if case .willAdd = $0 { true } else { false } }
            #expect(
                added == 0 || (added == nil && !announced),
                """
                The adder was cancelled before main() began, as happens when a cancel lands between \
                the queue's start() and main(). Expected it to add no number; it added \
                \(added.map(String.init) ?? "some") of 3. The loop looks at isCancelled only once a \
                number is in, so the first number is added whatever the flag says: look before \
                every number, the first included.
                Events: \(driver.events.timeline)
                \(lesson.see("Cancel work nobody will use"))
                """
            )
            #expect(
                adder.formattedTotal == nil && adder.total == nil,
                """
                An adder cancelled before its first number has no total, yet it reports \
                “\(adder.formattedTotal ?? adder.total.map(String.init) ?? "")”.
                \(lesson.see("Cancel work nobody will use"))
                """
            )
        }
    }
}
