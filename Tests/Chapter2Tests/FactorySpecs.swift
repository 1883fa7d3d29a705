import Chapter2
import Foundation
import KataTestSupport
import Testing

@Suite("A class can hand out an operation for each piece of data", .watched)
struct TheFactory {
    /// One call of `Averager.average(of:)`, as its observer saw it.
    struct Averaging: Sendable, CustomStringConvertible {
        let readings: [Int]
        let onQueue: Bool
        var description: String {
            "average(of: \(readings)) \(onQueue ? "on the queue" : "NOT on the queue")"
        }
    }

    // Hint: Averager.task(with:), "The factory". Where and when does the averaging happen, for
    // every batch, the empty one too, and who keeps the averager until then?
    // Covers: C11
    // Paths: values, memory
    @Test(
        "tasks from task(with:) do no work until queued, then each averages its own readings on the queue, an empty batch too, with only the tasks kept"
    )
    func tasksRunOnTheQueue() async throws {
        let queue = OperationQueue()
        let seen = Recorder<Averaging>()
        let batches = [[3, 5, 7], [10, 20], [], [-4, 4, 6, 2], [7]]
        // Only the tasks are kept, as a caller of a factory may do: nothing else holds the averager.
        let (tasks, averager): ([InvocationOperation<Averager, [Int], Int>], WeakReference<Averager>) = {
            let averager = Averager { readings in
                seen.record(Averaging(readings: readings, onQueue: OperationQueue.current === queue))
            }
            return (batches.map { averager.task(with: $0) }, WeakReference(averager))
        }()

        #expect(
            seen.count == 0,
            """
            Handing out the tasks already averaged: \(seen.timeline). A factory returns work to \
            be done, not work already done on the caller's thread.
            \(lesson.see("The factory"))
            """)

        for task in tasks { queue.addOperation(task) }
        await waitUntil("all \(batches.count) tasks to finish") { tasks.allSatisfy(\.isFinished) }

        let kept =
            averager.value == nil
            ? """
             The spec kept only the tasks, and the averager was gone when they ran: an operation \
            must keep its target alive until it has called the method.
            """ : ""
        let answers = tasks.map { Answer(asking: $0) }
        #expect(
            answers == [.value(5), .value(15), .value(0), .value(2), .value(7)],
            """
            Expected the tasks' results to be 5, 15, 0 (no readings), 2 and 7 (one reading); they \
            \(answers.map(\.description).joined(separator: ", ")).\(kept)
            \(lesson.see("The factory"))
            """)
        #expect(
            seen.count == batches.count && seen.all.allSatisfy(\.onQueue)
                && Set(seen.all.map(\.readings)) == Set(batches),
            """
            Expected each of the \(batches.count) batches of readings, the empty one and the one \
            of a single reading too, to be averaged once by average(of:), inside an operation of \
            the queue; the averaging calls were: \(seen.timeline). A task that answers for the \
            averager without calling its method, for whatever batch, skips what the method does \
            besides the sum.\(kept)
            \(lesson.see("The factory"))
            """)
    }

    // Hint: Averager.task(with:), "The factory". What does the averager keep of the tasks it
    // hands out, and what does each task keep?
    // Covers: C11
    // Paths: memory
    @Test(
        "the averager keeps none of the tasks it handed out: a task that ran on the queue goes when the caller lets go of it, and an averager whose task never ran goes with it"
    )
    func tasksAreLetGo() async {
        let queue = OperationQueue()
        let seen = Recorder<Averaging>()
        let averager = Averager { readings in
            seen.record(Averaging(readings: readings, onQueue: OperationQueue.current === queue))
        }
        let ranTask: WeakReference<InvocationOperation<Averager, [Int], Int>>
        do {
            let task = averager.task(with: [2, 4])
            ranTask = WeakReference(task)
            queue.addOperation(task)
            await waitUntil("the task to finish") { task.isFinished }
        }
        // A second task for the same readings, handed out after the first one ran: the factory
        // forgot the first, so this one averages on the queue too.
        let again = averager.task(with: [2, 4])
        queue.addOperation(again)
        await waitUntil("the second task for [2, 4] to finish") { again.isFinished }
        let againAnswer = Answer(asking: again)
        let unrun: (averager: WeakReference<Averager>, task: WeakReference<InvocationOperation<Averager, [Int], Int>>) =
            {
                let other = Averager()
                let task = other.task(with: [1])  // handed out, never queued, let go
                return (WeakReference(other), WeakReference(task))
            }()
        await waitUntil(
            "the task that ran to be freed once the queue and the caller let go of it",
            hint: """
                The averager that made it is still alive, and the task too: the averager keeps the \
                tasks it hands out, so every batch it ever averaged stays in memory as long as it \
                lives. A factory packages work and forgets it. \(lesson.see("The factory"))
                """
        ) { withExtendedLifetime(averager) { ranTask.value == nil } }
        await waitUntil(
            "an averager and its never-queued task to be freed once the caller let go of both",
            hint: """
                Both stay alive: the task keeps its target, as it must, and the averager keeps the \
                task, so the two keep each other for good. \(lesson.see("The factory"))
                """
        ) { unrun.averager.value == nil && unrun.task.value == nil }
        #expect(
            seen.all.map(\.description) == Array(repeating: "average(of: [2, 4]) on the queue", count: 2)
                && againAnswer == .value(3),
            """
            Expected two averagings of [2, 4], one per task that ran, each inside an operation of \
            the queue, and none for the task that never ran; the averaging calls were: \
            \(seen.timeline), and the second task \(againAnswer). A factory that remembers what it \
            averaged hands out tasks that skip the method, and keeps every batch it ever saw.
            \(lesson.see("The factory"))
            """)
    }
}
