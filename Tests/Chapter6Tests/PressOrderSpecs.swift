import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("A one-at-a-time press prints the most urgent ready job first, not the oldest", .watched)
struct PressOrderSpecs {
    static let batches: [Arrivals] = [
        Arrivals([.bulk, .standard, .express, .rush]),
        Arrivals([.standard, .bulk, .rush, .express]),
        Arrivals([.bulk, .rush, .bulk, .rush]),
        Arrivals([.express, .standard, .standard, .rush, .express]),
    ]

    // A width-1 queue is not first-in-first-out: when the press is free it starts the ready job
    // with the highest queuePriority. Look at Urgency.queuePriority and the lesson's table.
    // Covers: C43, C47
    // Paths: values
    @Test(
        "jobs waiting on a paused press print most urgent first once it resumes",
        arguments: batches
    )
    func pausedPressPrintsByUrgency(_ arrivals: Arrivals) async {
        let shop = PrintShop()
        let printed = Recorder<String>()
        shop.pause()
        for job in arrivals.jobs {
            shop.submit(job.title, urgency: job.urgency) { printed.record(job.title) }
        }
        shop.resume()

        let all = arrivals.jobs.count
        await waitUntil(
            "all \(all) jobs to print after the press resumed",
            hint: lesson.see("A one-at-a-time queue is not first-in-first-out")
        ) { printed.count == all }
        #expect(
            arrivals.urgencies(of: printed.all) == arrivals.urgencyOrder,
            """
            Jobs arrived as \(arrivals.testDescription); the press printed \(printed.timeline). \
            A press that orders by priority prints the urgencies as \
            \(spelled(arrivals.urgencyOrder)) (in any order within one urgency): a queue \
            limited to one job at a time still starts the most urgent ready job first.
            \(lesson.see("A one-at-a-time queue is not first-in-first-out"))
            """
        )
    }

    // Jobs that arrive while the press is busy wait; when it frees up, the queue picks the most
    // urgent of them, whatever their order of arrival. Look at Urgency.queuePriority.
    // Covers: C43, C47
    // Paths: values
    @Test(
        "jobs that arrive while the press is busy print most urgent first",
        arguments: Urgency.allCases
    )
    func busyPressPrintsByUrgency(repeating urgency: Urgency) async {
        let shop = PrintShop()
        let printed = Recorder<String>()
        let jobOnThePress = HeldJob("job on the press", log: printed)
        shop.press.addOperation(jobOnThePress)
        await waitUntil("the first job to start printing") { printed.contains("job on the press") }

        // Least urgent first, then a second job at the argument's urgency.
        let arrivals = Arrivals(mostUrgentFirst.reversed() + [urgency])
        for job in arrivals.jobs {
            shop.submit(job.title, urgency: job.urgency) { printed.record(job.title) }
        }
        jobOnThePress.finish()

        let all = arrivals.jobs.count + 1
        await waitUntil(
            "all \(all) jobs to print after the first one finished",
            hint: lesson.see("A one-at-a-time queue is not first-in-first-out")
        ) { printed.count == all }
        #expect(
            printed.all.first == "job on the press"
                && arrivals.urgencies(of: printed.all) == arrivals.urgencyOrder,
            """
            While one job printed, \(arrivals.testDescription) arrived; the press then printed \
            \(printed.timeline). Expected the urgencies as \(spelled(arrivals.urgencyOrder)) \
            after the job on the press (in any order within one urgency): the queue picks the \
            most urgent waiting job each time the press frees up, not the oldest.
            \(lesson.see("A one-at-a-time queue is not first-in-first-out"))
            """
        )
    }

    // The shop owns its press's width: whatever width the queue it is handed had, it prints one
    // job at a time. Look at PrintShop.init: is the width set every time, or only sometimes?
    // Covers: C47, C43
    // Paths: values
    @Test(
        "a press handed in wider still prints one job at a time, the most urgent waiting job first",
        arguments: [2, 3, 8]
    )
    func widerPressPrintsOneAtATime(width: Int) async {
        let press = OperationQueue()
        press.maxConcurrentOperationCount = width
        let shop = PrintShop(press: press)
        let printed = Recorder<String>()
        let jobOnThePress = HeldJob("job on the press", log: printed)
        shop.press.addOperation(jobOnThePress)
        await waitUntil("the first job to start printing") { printed.contains("job on the press") }

        shop.submit("bulk flyers", urgency: .bulk) { printed.record("bulk flyers") }
        // A press one job wide is busy, so the flyers wait; a wider one starts them within
        // milliseconds.
        let printedBeside = await comesTrue(within: Bound.scaled(.milliseconds(300))) {
            printed.contains("bulk flyers")
        }
        shop.submit("rush cards", urgency: .rush) { printed.record("rush cards") }
        jobOnThePress.finish()
        await waitUntil(
            "both jobs to print after the first one finished",
            hint: lesson.see("A one-at-a-time queue is not first-in-first-out")
        ) { printed.count == 3 }

        #expect(
            !printedBeside,
            """
            The shop was handed a press \(width) jobs wide, and it printed the bulk flyers while \
            another job was still on the press (\(printed.timeline)). The shop sets its press to \
            one job at a time whatever width it was handed, not only when the width is the \
            default: side by side, the jobs have no order left.
            \(lesson.see("A one-at-a-time queue is not first-in-first-out"))
            """
        )
        let expected = ["job on the press", "rush cards", "bulk flyers"]
        #expect(
            printed.all == expected,
            """
            On a press handed in \(width) jobs wide, the bulk flyers and then the rush cards arrived \
            while another job printed; the press did \(printed.timeline). Expected \
            \(expected.joined(separator: " → ")): one job at a time, and when the press frees up, \
            the most urgent waiting job, not the oldest.
            \(lesson.see("A one-at-a-time queue is not first-in-first-out"))
            """
        )
    }
}
