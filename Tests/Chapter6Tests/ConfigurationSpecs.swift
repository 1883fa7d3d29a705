import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("A job is fully configured before the press receives it", .watched)
struct ConfigurationSpecs {
    // Look at the order of the lines in PrintShop.submit: once the press holds the job, a
    // priority, quality of service or dependency set afterwards may come too late.
    // Covers: C48, C46
    // Paths: values
    @Test(
        "the press receives each job with its priority, quality of service and prerequisites already set",
        arguments: Urgency.allCases
    )
    func configuredBeforeHandOff(_ urgency: Urgency) async {
        let press = WatchedPress()
        let shop = PrintShop(press: press)
        let log = Recorder<String>()
        let paper = Delivery("paper arrived", into: log)
        // A second carton from the same supplier: a prerequisite's name is no identity.
        let morePaper = Delivery("paper arrived", into: log)
        let ink = Delivery("ink arrived", into: log)
        let supplies = [paper, morePaper, ink]
        let title = "\(urgency) leaflets"
        shop.pause()
        let job = shop.submit(title, urgency: urgency, after: supplies.map(\.operation)) {
            log.record(title)
        }

        let handOff = press.firstHandOff(of: title)
        #expect(
            handOff != nil,
            """
            The shop never added "\(title)" to its press with addOperation; hand each job \
            to the press queue.
            \(lesson.see("Configure before you enqueue"))
            """
        )
        if let handOff {
            let wanted = (spelled(expectedPriority(urgency)), spelled(expectedQuality(urgency)))
            #expect(
                handOff.priority == wanted.0 && handOff.quality == wanted.1,
                """
                When the press received the \(urgency) job it carried queue priority \
                \(handOff.priority) and quality of service \(handOff.quality); it should already \
                carry \(wanted.0) and \(wanted.1). Configure a job before adding it: \
                a priority changed afterwards may come too late.
                \(lesson.see("Configure before you enqueue"))
                """
            )
            let held = supplies.filter { handOff.dependsOn($0.operation) }.count
            #expect(
                held == supplies.count,
                """
                When the press received the \(urgency) job it depended on \
                \(handOff.dependencies.isEmpty ? "nothing" : handOff.dependencies.joined(separator: ", ")) \
                (\(held) of its \(supplies.count) prerequisites); it should already depend on every \
                one: two cartons of paper, both named "paper arrived", and the ink. Each prerequisite \
                is its own operation, whatever its name. On a running press a job that is ready \
                when it arrives can start before a dependency added afterwards.
                \(lesson.see("Configure before you enqueue"))
                """
            )
        }

        shop.resume()
        supplies.forEach { $0.arrive() }
        await waitUntil(
            "the \(urgency) leaflets to print once the paper and the ink arrived",
            givingUpWhen: { job.isFinished ? "the job finished without printing" : nil }
        ) { log.contains(title) }
    }

    // A job already on the press belongs to the queue: PrintShop.submit may read a prerequisite,
    // never change its queuePriority or qualityOfService, whether it is less urgent than the new
    // job or more, and whatever the new job's urgency. The press's own quality of service is not
    // the job's either: set on the queue, it reaches every job the press runs.
    // Covers: C48, C46, C49
    // Paths: values, interference
    @Test(
        "submitting a job of any urgency leaves each prerequisite's priority and quality of service, and the press's, as they were",
        arguments: Urgency.allCases
    )
    func prerequisitesKeepTheirPriority(_ urgency: Urgency) async {
        let shop = PrintShop()
        let log = Recorder<String>()
        shop.pause()
        let proof = shop.submit("bulk proof", urgency: .bulk) { log.record("bulk proof") }
        let cards = shop.submit("express cards", urgency: .express) { log.record("express cards") }
        let prerequisites = [(title: "bulk proof", job: proof), (title: "express cards", job: cards)]
        let before = prerequisites.map { (priority: $0.job.queuePriority, quality: $0.job.qualityOfService) }
        let pressClass = shop.press.qualityOfService
        shop.submit("final run", urgency: urgency, after: [proof, cards]) { log.record("final run") }

        #expect(
            shop.press.qualityOfService == pressClass,
            """
            Submitting the \(urgency) final run changed the press's own quality of service from \
            \(spelled(pressClass)) to \(spelled(shop.press.qualityOfService)). A queue's class \
            reaches every job it runs (on Linux it sets the priority of the threads that print \
            them all), so one job's class would slow down or speed up the others. Quality of \
            service is the job's own setting: give it to the job, never to the press.
            \(lesson.see("Quality of service, not thread priority"))
            """
        )

        for (prerequisite, was) in zip(prerequisites, before) {
            let now = (priority: prerequisite.job.queuePriority, quality: prerequisite.job.qualityOfService)
            #expect(
                now == was,
                """
                The \(prerequisite.title) was already on the press with queue priority \
                \(spelled(was.priority)) and quality of service \(spelled(was.quality)); \
                submitting the \(urgency) final run after it changed them to \(spelled(now.priority)) \
                and \(spelled(now.quality)). Once queued, an operation's settings may no longer \
                count, and they rank it against every other job: order the final run with a \
                dependency and leave its prerequisites alone, more urgent or less.
                \(lesson.see("Configure before you enqueue"))
                """
            )
        }
        shop.resume()
        await waitUntil(
            "the three jobs to print after the press resumed",
            hint: lesson.see("Priority is not an order: use a dependency")
        ) { log.count == 3 }
        let expected = ["express cards", "bulk proof", "final run"]
        #expect(
            log.all == expected,
            """
            Expected \(expected.joined(separator: " → ")), but the press printed \
            \(log.timeline). The express cards outrank the bulk proof, and the final run waits \
            for the proof because it depends on it, not because of any priority.
            \(lesson.see("Priority is not an order: use a dependency"))
            """
        )
    }
}
