import Chapter1
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("Each model owns its own sums")
    @MainActor
    struct TwoModelsSpecs {
        // Hint: ListAdder, "Cancel work nobody will use". Two screens, two models. Where does
        // ListAdder keep its queue and its running sum: in the model, or somewhere every model
        // shares (a static)? What does one model's cancel or deinit reach?
        // Covers: C4, C7, C10
        // Paths: interference
        @Test("editing one model and letting it go leaves another model's running sum alone")
        func oneModelLeavesAnotherAlone() async {
            let kept = SumDriver()
            let other = SumDriver(paced: false)
            defer { kept.releaseAll() }
            let screen = Recorder<Redraw>()
            let model = ListAdder(numbers: [1, 2], probe: kept.probe)
            model.draw(into: screen)
            let released = Recorder<Bool>()
            var otherModel: ListAdder? = ListAdder(numbers: [10], probe: other.probe)
            otherModel?.onRelease = { released.record(true) }

            model.add(3)  // the kept model's run 1: [1, 2, 3], held at its first number
            guard
                await kept.waitDuringRun(
                    1, until: "the kept model's run 1 to start adding", { kept.pacer(1).arrivals == 1 })
            else {
                return
            }
            otherModel?.add(20)  // the other model's run 1
            otherModel?.add(30)  // its run 2, which makes its run 1 pointless
            guard
                await waitUntil(
                    "the other model's run 2 to stop", hint: "Its events: \(other.events.timeline)",
                    { other.numbersAdded(by: 2) != nil })
            else { return }
            otherModel = nil  // the other screen goes away
            guard
                await waitUntil(
                    "the other model to be released once its screen let go of it",
                    hint: lesson.see("Release the model on the main queue"), { released.count > 0 })
            else { return }
            kept.releaseAll()
            guard await kept.resultReachedOwner(run: 1) else { return }
            await MainQueue.drain()

            let added = kept.numbersAdded(by: 1) ?? 0
            #expect(
                added == 3,
                """
                One model's run 1 was adding up [1, 2, 3] while another model recalculated twice \
                and was let go; run 1 stopped after \(added) of 3 numbers. Nothing changed its own \
                list: the other model's cancel or deinit reached it, through a queue or a running \
                sum that every model shares. Each model keeps its own queue and its own running sum.
                Events: \(kept.events.timeline)
                \(lesson.see("Cancel work nobody will use"))
                """)
            #expect(
                screen.all == [Redraw(text: "6", onMainQueue: true)] && !model.isRecalculating,
                """
                The kept model's only recalculation ran to its end, for [1, 2, 3]. Expected its \
                screen to redraw “6” once, on the main queue, and the spinner to stop; it redrew \
                \(screen.timeline) and isRecalculating is \(model.isRecalculating).
                \(lesson.see("Show results on the main queue"))
                """)
        }
    }
}
