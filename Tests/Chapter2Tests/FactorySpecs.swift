import Chapter2
import Foundation
import KataTestSupport
import Testing

@Suite("A class can hand out an operation for each piece of data")
struct TheFactory {
    /// One call of `Averager.average(of:)`, as its observer saw it.
    struct Averaging: Sendable, CustomStringConvertible {
        let readings: [Int]
        let onQueue: Bool
        var description: String {
            "average(of: \(readings)) \(onQueue ? "on the queue" : "NOT on the queue")"
        }
    }

    // Hint: Averager.task(with:), "The factory". Where and when does the averaging happen?
    // Covers: C11
    @Test(
        "tasks from task(with:) do no work until queued, then each averages its own readings on the queue"
    )
    func tasksRunOnTheQueue() async throws {
        let queue = OperationQueue()
        let seen = Recorder<Averaging>()
        let averager = Averager { readings in
            seen.record(Averaging(readings: readings, onQueue: OperationQueue.current === queue))
        }
        let batches = [[3, 5, 7], [10, 20], [-4, 4, 6, 2]]
        let tasks = batches.map { averager.task(with: $0) }

        #expect(
            seen.count == 0,
            """
            Handing out the tasks already averaged: \(seen.timeline). A factory returns work to \
            be done, not work already done on the caller's thread.
            \(lesson.see("The factory"))
            """)

        for task in tasks { queue.addOperation(task) }
        await waitUntil("all three tasks to finish") { tasks.allSatisfy(\.isFinished) }

        let answers = tasks.map { Answer(asking: $0) }
        #expect(
            answers == [.value(5), .value(15), .value(2)],
            """
            Expected the tasks' results to be 5, 15 and 2; they \
            \(answers.map(\.description).joined(separator: ", ")).
            \(lesson.see("The factory"))
            """)
        #expect(
            seen.count == 3 && seen.all.allSatisfy(\.onQueue)
                && Set(seen.all.map(\.readings)) == Set(batches),
            """
            Expected each batch of readings to be averaged once, inside an operation of the queue; \
            the averaging calls were: \(seen.timeline).
            \(lesson.see("The factory"))
            """)
    }
}
