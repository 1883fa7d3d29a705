import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("An order that must hold is a dependency, not a priority")
struct DependencySpecs {
    // A higher priority for the prerequisite does not stop a ready job from printing first.
    // Make each job depend on the operations passed as `after:`.
    // Covers: C46, C44
    @Test("a rush job waits for its bulk proof, even while the proof waits for paper")
    func dependencyHoldsOnOnePress() async {
        let shop = PrintShop()
        let log = Recorder<String>()
        let paper = Delivery("paper arrived", into: log)

        shop.pause()
        let proof = shop.submit("proof", urgency: .bulk, after: [paper.operation]) {
            log.record("proof")
        }
        shop.submit("final run", urgency: .rush, after: [proof]) { log.record("final run") }
        shop.submit("sweep", urgency: .bulk) { log.record("sweep") }
        shop.resume()

        await waitUntil(
            "the sweep, the only ready job, to print first",
            hint: lesson.see("Priority is not an order: use a dependency")
        ) { log.contains("sweep") }
        paper.arrive()
        await waitUntil(
            "the final run to print after the paper and the proof",
            hint: lesson.see("Priority is not an order: use a dependency")
        ) { log.contains("final run") && log.contains("proof") }

        let expected = ["sweep", "paper arrived", "proof", "final run"]
        #expect(
            log.all == expected,
            """
            Expected \(expected.joined(separator: " → ")), but the shop did \(log.timeline). \
            Arrival order and priorities cannot hold a job back: only a dependency keeps the \
            proof waiting for its paper and the final run waiting for the proof.
            \(lesson.see("Priority is not an order: use a dependency"))
            """
        )
    }

    // The bindery is another queue: no priority set on the press can hold its jobs back.
    // Only a dependency reaches across queues.
    // Covers: C45, C46
    @Test("binding waits for printing on another press; a priority there changes nothing")
    func dependencyHoldsAcrossPresses() async {
        let printShop = PrintShop()
        let bindery = PrintShop()
        let log = Recorder<String>()

        printShop.pause()
        let pages = printShop.submit("print the pages", urgency: .bulk) {
            log.record("print the pages")
        }
        bindery.pause()
        bindery.submit("bind the book", urgency: .rush, after: [pages]) {
            log.record("bind the book")
        }
        bindery.submit("sweep the bindery", urgency: .bulk) { log.record("sweep the bindery") }
        bindery.resume()

        await waitUntil(
            "the bindery's sweep, its only ready job, to run while the pages were not printed",
            hint: lesson.see("Priorities stay inside one queue")
        ) { log.contains("sweep the bindery") }
        printShop.resume()
        await waitUntil(
            "the book to be bound after its pages were printed",
            hint: lesson.see("Priorities stay inside one queue")
        ) { log.contains("bind the book") && log.contains("print the pages") }

        let expected = ["sweep the bindery", "print the pages", "bind the book"]
        #expect(
            log.all == expected,
            """
            Expected \(expected.joined(separator: " → ")), but the shops did \(log.timeline). \
            Each queue ranks only its own jobs: a priority on the press cannot make the bindery \
            wait. A dependency can, because it works across queues.
            \(lesson.see("Priorities stay inside one queue"))
            """
        )
    }
}
