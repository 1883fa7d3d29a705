import Chapter1
import Foundation
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
            guard await driver.waitDuringRun(1, until: "run 1 to start adding", { driver.pacer(1).arrivals == 1 })
            else {
                return
            }
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

        // Hint: ListAdder, "Release the model on the main queue". While the completion block
        // runs on the queue's thread, does it hold the model strongly, even for a moment? If the
        // screen lets go of the model just then, which thread drops the last reference?
        // Covers: C10
        // Paths: memory
        @Test("a model let go of as its total is shown is released on the main queue, round after round")
        func modelLetGoAsItsTotalIsShownIsReleasedOnTheMainQueue() async {
            // The screen drops the model inside onTotalChange, while a strong reference taken by
            // the completion block may still be on its way out on the queue's thread. The moment
            // is short and lies between two lines of the model's own code: many rounds catch it.
            // They run back to back on a thread of their own, each waiting at a gate its model's
            // release opens, so that no round waits longer than the release takes.
            let rounds = 1000
            let outcome = await callOnItsOwnThread(
                "\(rounds) rounds of a screen letting go of its model as the total is shown",
                timeout: Bound.standard * 10, hint: lesson.see("Release the model on the main queue")
            ) { () -> (round: Int, releasedOnMain: Bool?) in
                for round in 1...rounds {
                    let released = Gate("round \(round)'s model released")
                    let releases = Recorder<Bool>()
                    let screen = Protected<ListAdder?>(nil)
                    // Made and asked on the main queue, as a screen does: the maker's own reference
                    // then ends there too, and never stands for the last one off the main queue.
                    DispatchQueue.main.async {
                        let model = ListAdder(numbers: [1])
                        model.onRelease = {
                            releases.record(MainQueue.isCurrent)
                            released.open()
                        }
                        model.onTotalChange = { _ in screen.withValue { $0 = nil } }  // the screen goes away
                        screen.withValue { $0 = model }
                        model.add(2)
                    }
                    guard released.wait() else { return (round, nil) }
                    guard releases.all == [true] else { return (round, false) }
                }
                return (rounds, true)
            }
            guard let outcome else { return }
            #expect(
                outcome.releasedOnMain != nil,
                """
                In round \(outcome.round) of \(rounds), the screen let go of the model on the main \
                queue as its total 3 was shown, but the model was not released within \
                \(Bound.standard.timeInterval) s: something still holds it once its total is shown \
                (a completion block that captures it strongly, say).
                \(lesson.see("Release the model on the main queue"))
                """)
            #expect(
                outcome.releasedOnMain != false,
                """
                In round \(outcome.round) of \(rounds), the screen let go of the model on the main \
                queue as its total 3 was shown, and the model was released off the main queue: \
                the completion block held it strongly on the queue's thread (`guard let \
                self`, say), and that thread dropped the last reference and ran deinit. Keep \
                the model weak all the way to the main queue and unwrap it there.
                \(lesson.see("Release the model on the main queue"))
                """)
        }

        // Hint: ListAdder, "Release the model on the main queue". What does each adder's
        // completion block capture, and who still holds an adder once its result was decided,
        // while the model lives and once it is gone?
        // Covers: C81, C7
        // Paths: memory
        @Test(
            "no adder outlives its sum: one whose total was shown, one superseded, one stopped by the model's release")
        func addersAreFreed() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            // Each run's adder, reached the public way: the queue running it, from its first number.
            let adders = Protected<[Int: WeakReference<AdderOperation>]>([:])
            let probe: @Sendable (SumEvent) -> Void = { event in
                if case .willAdd(let run, 0) = event {
                    let running = OperationQueue.current?.operations.lazy.compactMap { $0 as? AdderOperation }
                        .first { $0.run == run }
                    adders.withValue { $0[run] = WeakReference(running) }
                }
                driver.probe(event)
            }
            var model: ListAdder? = ListAdder(numbers: [1, 2], probe: probe)
            func reached(_ run: Int) async -> Bool {
                guard
                    await driver.waitDuringRun(
                        run, until: "run \(run) to start adding", { driver.pacer(run).arrivals == 1 })
                else {
                    return false
                }
                guard adders.value[run]?.value != nil else {
                    Issue.record(
                        """
                        Run \(run) began adding, but not inside an AdderOperation that an operation \
                        queue runs: OperationQueue.current, asked from its first number, listed no \
                        adder for run \(run). Each recalculation is an AdderOperation on the model's \
                        queue.
                        \(lesson.see("The pattern"))
                        """)
                    return false
                }
                return true
            }

            model?.add(3)  // run 1: its total is shown
            guard await reached(1) else { return }
            driver.pacer(1).releaseAll()
            guard await driver.resultReachedOwner(run: 1) else { return }
            model?.add(4)  // run 2, superseded by run 3 at its first number
            guard await reached(2) else { return }
            model?.add(5)
            driver.pacer(2).releaseAll()
            guard await reached(3) else { return }
            driver.pacer(3).releaseAll()
            guard await driver.resultReachedOwner(run: 3) else { return }
            // The model lives on: it may keep its newest adder, but none whose result it dropped or replaced.
            let patience = Bound.scaled(.milliseconds(500))
            let olderFreed = await comesTrue(within: patience) {
                driver.wasDelivered(2) && [1, 2].allSatisfy { adders.value[$0]?.value == nil }
            }
            #expect(
                olderFreed,
                """
                Run 3's total was shown, run 1's before it and run 2 was superseded, and the model \
                is still on screen. Yet the adders of runs \([1, 2].filter { adders.value[$0]?.value != nil }) \
                were still in memory \(patience.seconds) s later: the model keeps every adder it \
                started (a list kept to cancel them all, say), so each one's numbers stay for as \
                long as the screen lives. Keep the operation in progress only; the queue can cancel \
                the rest.
                \(lesson.see("Release the model on the main queue"))
                """)
            model?.add(6)  // run 4, running when the screen lets go of the model
            guard await reached(4) else { return }
            model = nil
            driver.releaseAll()
            guard
                await waitUntil(
                    "runs 2 and 4 to stop", hint: "Events: \(driver.events.timeline)",
                    { driver.numbersAdded(by: 2) != nil && driver.numbersAdded(by: 4) != nil })
            else { return }
            await MainQueue.drain()
            let freed = await comesTrue(within: patience) {
                adders.value.values.allSatisfy { $0.value == nil }
            }
            let kept = adders.value.filter { $0.value.value != nil }.keys.sorted()
            #expect(
                freed,
                """
                Every recalculation had ended: run 1 and run 3 were shown, run 2 was superseded, run \
                4 was stopped when the screen let go of the model. Yet the adders of runs \(kept) \
                were still in memory \(patience.seconds) s later. Most often the completion block captures its own \
                adder strongly: the adder holds the block, the block holds the adder, and Linux \
                never clears a completion block. Capture it weakly.
                \(lesson.see("Release the model on the main queue"))
                """)
        }
    }
}
