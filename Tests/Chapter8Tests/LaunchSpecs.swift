import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("start() launches the async work in a Task and returns at once")
struct LaunchingTheWork {
    // start() must create the Task, mark the operation executing and return; the operation stays
    // unfinished until the work ends. A main() that spawns a Task is "finished" as soon as it returns.
    // Covers: C17, C18, C61
    @Test("after start() returns, the fetch is waiting and the operation is executing, not finished")
    func startReturnsWhileTheWorkWaits() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation) }

        queue.addOperation(operation)
        guard await waitForLaunch(operation, loader) else { return }
        let (executing, finished) = (operation.isExecuting, operation.isFinished)
        #expect(
            operation.isAsynchronous,
            """
            isAsynchronous is false: the operation tells the world its work is over when start() returns.
            \(lesson.see("The steps"))
            """)
        #expect(
            executing && !finished,
            """
            With its fetch still waiting, the operation reported isExecuting \(executing) and isFinished \
            \(finished); expected true and false. It declared itself done before its async work ended.
            \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Start launches a Task and returns"))
            """)

        guard await letWorkEnd("a", loader) else { return }
        await waitUntil(
            "the operation to finish once its async work ended",
            hint: loader.trace.lifecycle(missing: "never finished") + "\n"
                + lesson.see("Finish when the work ends, once")
        ) { operation.isFinished }
        #expect(
            !operation.isExecuting,
            "A finished operation still reports isExecuting true. \(lesson.see("Finish when the work ends, once"))")
    }
}
