import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("Readiness comes before priority", .watched)
struct ReadinessSpecs {
    // Priority only ranks jobs that are ready, and a rush job that waits for its paper is not,
    // even while the paper is already being unloaded on another queue: a prerequisite that is
    // running has not finished, and neither has one that was cancelled while it runs: cancel()
    // only asks it to stop. Look at what PrintShop.submit does with `after:`.
    // Covers: C44, C46
    // Paths: reuse
    @Test(
        "a ready bulk job prints before a rush job still waiting for its paper: not yet sent, unloading, or cancelled while unloading",
        arguments: Delivery.Stage.allCases
    )
    func readyLowPriorityJobGoesFirst(_ stage: Delivery.Stage) async {
        let shop = PrintShop()
        let log = Recorder<String>()
        let paper = await Delivery.at(stage, "paper arrived", into: log)

        shop.pause()
        shop.submit("rush posters", urgency: .rush, after: [paper.operation]) {
            log.record("rush posters")
        }
        shop.submit("bulk flyers", urgency: .bulk) { log.record("bulk flyers") }
        shop.resume()

        await waitUntil(
            "the ready bulk flyers to print while the rush posters waited for paper",
            hint: lesson.see("Readiness first, then priority")
        ) { log.contains("bulk flyers") }
        paper.arrive()
        await waitUntil(
            "the rush posters to print once the paper arrived",
            hint: lesson.see("Readiness first, then priority")
        ) { log.contains("rush posters") }

        let expected = ["bulk flyers", "paper arrived", "rush posters"]
        #expect(
            log.all == expected,
            """
            When \(stage.testDescription), expected \(expected.joined(separator: " → ")), but the \
            shop did \(log.timeline). A job that waits for a prerequisite is not ready, and a \
            queue only ranks ready jobs: the ready bulk job prints first, the rush job after its \
            paper arrives. A prerequisite that is already running has not finished either, nor \
            has one cancelled while it runs (cancel() only asks it to stop), so the job depends \
            on every prerequisite, whatever state it is in.
            \(lesson.see("Readiness first, then priority"))
            """
        )
    }
}
