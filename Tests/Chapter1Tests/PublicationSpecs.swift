import Chapter1
import Foundation
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("An operation's results mean something only once it has finished")
    struct PublicationSpecs {
        /// What a reader saw in the adder's two result properties at one moment.
        struct Reading: Sendable, Equatable, CustomStringConvertible {
            let total: Int?
            let formatted: String?

            var description: String { "\(total.map(String.init) ?? "nil")/“\(formatted ?? "nil")”" }
        }

        // Hint: AdderOperation, "Publish results only when finished". Keep the running total
        // local, store the result once at the end, and make reading it safe from any thread.
        // Covers: C5, C8
        // Paths: interference
        @Test("an adder's total stays empty until it has finished, whoever reads it and when")
        func totalIsPublishedOnlyWhenFinished() async {
            let driver = SumDriver()
            defer { driver.releaseAll() }
            let adder = AdderOperation(numbers: [1, 2, 3], run: 1, probe: driver.probe)
            let queue = makeQueue()
            // A second reader on its own thread, sharing no lock with the adder.
            let watcher = Watcher(
                reading: { Reading(total: adder.total, formatted: adder.formattedTotal) },
                until: Reading(total: 6, formatted: "6"))
            queue.addOperation(adder)

            driver.pacer(1).allow(2)
            guard
                await driver.waitDuringRun(
                    1, until: "the adder to reach its last number", { driver.pacer(1).arrivals == 3 })
            else { return }
            let early = Reading(total: adder.total, formatted: adder.formattedTotal)
            #expect(
                early == Reading(total: nil, formatted: nil),
                """
                Halfway through, the adder already reported \(early). A reader cannot tell a \
                partial total from a real one: results must appear only when the operation has \
                finished.
                \(lesson.see("Publish results only when finished"))
                """
            )

            driver.releaseAll()
            await waitUntil("the adder to finish") { adder.isFinished }
            var seen = await watcher.stop(finalIsDue: adder.total == 6)
            // A few more adders that run freely, each read by a thread of its own meanwhile.
            for round in 2...4 {
                let free = AdderOperation(numbers: [1, 2, 3], run: round)
                // This reader reads formattedTotal first: a lock taken to read total before it would
                // order an unlocked read after the write, and ThreadSanitizer would see nothing.
                let reader = Watcher(
                    reading: {
                        let formatted = free.formattedTotal
                        return Reading(total: free.total, formatted: formatted)
                    },
                    until: Reading(total: 6, formatted: "6"))
                queue.addOperation(free)
                await waitUntil("adder \(round) to finish") { free.isFinished }
                seen += await reader.stop(finalIsDue: free.total == 6)
            }
            // The two properties are read one after the other, so each may be before or after.
            #expect(
                seen.allSatisfy { [nil, 6].contains($0.total) && [nil, "6"].contains($0.formatted) },
                """
                A thread reading the results while the adder ran saw \
                \(seen.map(\.description).joined(separator: " → ")). Any thread may read them at \
                any time: before the end it must see nil, afterwards the final total.
                \(lesson.see("Publish results only when finished"))
                """
            )
            #expect(adder.total == 6, "Expected the finished adder's total to be 6 for [1, 2, 3].")
            #expect(adder.formattedTotal == "6", "Expected the finished adder to format its total as “6”.")
        }

        // Hint: AdderOperation and ListAdder, "Publish results only when finished". What does
        // your code take as the sign that a sum ran to its end, and does an empty list have one?
        // Covers: C5, C1
        // Paths: values
        @Test("removing the last number shows the total 0, on the main queue, and stops the spinner")
        @MainActor
        func emptyListShowsZero() async {
            let driver = SumDriver(paced: false)
            let screen = Recorder<Redraw>()
            let model = ListAdder(numbers: [7], probe: driver.probe)
            model.draw(into: screen)

            model.remove(at: 0)  // run 1: the empty list, which has no number to add
            guard await driver.resultReachedOwner(run: 1) else { return }
            await MainQueue.drain()
            #expect(
                screen.all == [Redraw(text: "0", onMainQueue: true)] && model.formattedTotal == "0"
                    && !model.isRecalculating,
                """
                The only number was removed, and the sum of the empty list ran to its end without \
                adding anything. Expected the screen to redraw “0” once, on the main queue, and the \
                spinner to stop; it redrew \(screen.timeline), the model shows \
                “\(model.formattedTotal)” and isRecalculating is \(model.isRecalculating). A sum \
                that added nothing because there was nothing to add has finished: its total is 0.
                \(lesson.see("Publish results only when finished"))
                """)
        }
    }
}
