import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("Queues and dependents wait for the async work, not for the Task to be created", .watched)
struct WaitingForTheWork {
    // Look at where the operation becomes finished (main(), start(), finish(with:)) and the lesson's
    // "Finish when the work ends, once". In the timeline, what ran before "resize a ended"?
    // Covers: C20, C61
    @Test("a dependent runs only after the async work ended, and the queue then drains", .preflight)
    func dependentRunsAfterTheWork() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        #expect(
            !operation.isFinished,
            """
            The operation reported isFinished true while its fetch was still waiting, so its dependent is \
            free to run too early. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Start launches a Task and returns"))
            """)

        guard await letWorkEnd("a", loader) else { return }
        guard
            await waitUntil(
                "the dependent to run after the thumbnail finished",
                hint: loader.trace.lifecycle(missing: "dependent never ran") + "\n"
                    + "Nobody heard that the operation finished: announce isFinished after setting the flag.\n"
                    + lesson.see("Finish when the work ends, once"),
                { loader.trace.contains { $0.hasPrefix("sentinel ran") } })
        else { return }
        #expect(
            loader.trace.contains("sentinel ran") && loader.trace.recorded("resize a ended", before: "sentinel ran"),
            """
            The dependent ran before the async work ended (or saw no result). \
            \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Finish when the work ends, once"))
            """)
        await waitUntil(
            "the queue to drain (operationCount 0)",
            hint: loader.trace.lifecycle(missing: "queue still holds \(queue.operationCount) operation(s)") + "\n"
                + lesson.see("Finish when the work ends, once")
        ) { queue.operationCount == 0 }
    }

    // Look at what tells a one-at-a-time queue that its slot is free, and the lesson's "Start
    // launches a Task and returns". When did thumbnail b's fetch begin?
    // Covers: C20, C61
    @Test(
        "a one-at-a-time queue starts the next thumbnail only after the first one's async work ended", .preflight)
    func oneAtATimeQueueWaitsForTheWork() async {
        let loader = ScriptedLoader()
        let first = TracedThumbnail("a", loader: loader)
        let second = TracedThumbnail("b", loader: loader)
        let queue = makeQueue(width: 1)
        defer { loader.endSpec(keepingAlive: queue, first, second) }

        queue.enqueue([first, second])
        guard await waitForLaunch(first, loader) else { return }
        #expect(
            !first.isFinished && !loader.trace.contains("fetch b began"),
            """
            While thumbnail a's fetch was still waiting, a reported isFinished \(first.isFinished) and \
            b's fetch \(loader.trace.contains("fetch b began") ? "had begun" : "had not begun"); \
            the only slot must stay taken until a's work ends.
            \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Start launches a Task and returns"))
            """)

        guard await letWorkEnd("a", loader) else { return }
        guard
            await waitUntil(
                "the queue to start thumbnail b once a finished",
                hint: loader.trace.lifecycle(missing: "b never started") + "\n"
                    + "Thumbnail a still holds the queue's only slot: announce isFinished after setting the flag.\n"
                    + lesson.see("Finish when the work ends, once"),
                { loader.trace.contains("fetch b began") })
        else { return }
        #expect(
            loader.trace.recorded("resize a ended", before: "fetch b began"),
            """
            Thumbnail b's work began before a's work ended. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Finish when the work ends, once"))
            """)
    }
}
