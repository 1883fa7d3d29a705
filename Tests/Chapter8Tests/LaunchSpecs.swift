import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("start() launches the async work in a Task and returns at once", .watched)
struct LaunchingTheWork {
    // Look at ThumbnailOperation.start() and main(), and the lesson's "Start launches a Task and
    // returns": who creates the Task, what keeps the operation unfinished after start() returns,
    // and what does a second start() find?
    // Covers: C17, C18, C61
    // Paths: reuse
    @Test(
        "after start() returns, the fetch is waiting and the operation is executing, not finished; start() again launches nothing",
        .preflightStartingAgain)
    func startReturnsWhileTheWorkWaits() async {
        let loader = ScriptedLoader()
        let operation = makeThumbnail("a", loader)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation) }

        queue.addOperation(operation)
        guard await waitForLaunch(operation, loader) else { return }
        let (executing, finished) = (operation.isExecuting, operation.isFinished)
        #expect(
            operation.isAsynchronous,
            """
            isAsynchronous is false: the operation tells the world its work is over when start() returns.
            \(lesson.see("Start launches a Task and returns"))
            """)
        #expect(
            executing && !finished,
            """
            With its fetch still waiting, the operation reported isExecuting \(executing) and isFinished \
            \(finished); expected true and false. It declared itself done before its async work ended.
            \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Start launches a Task and returns"))
            """)
        #expect(
            !loader.trace.contains { $0.hasSuffix("made while the operation was created") },
            """
            The fetch ran in a Task created together with the operation, so the work began before any \
            queue started it. Create the Task in start(). \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Start launches a Task and returns"))
            """)

        guard await startAgain(operation, "while the fetch waits") else { return }
        #expect(
            operation.isExecuting && !operation.isFinished,
            """
            start() was called again while the fetch waited, and then the operation reported isExecuting \
            \(operation.isExecuting) and isFinished \(operation.isFinished); expected true and false. A later \
            start() finds the work launched and returns. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Start launches a Task and returns"))
            """)

        guard await letWorkEnd("a", loader) else { return }
        guard
            await waitUntil(
                "the operation to finish once its async work ended",
                hint: loader.trace.lifecycle(missing: "never finished") + "\n"
                    + lesson.see("Finish when the work ends, once"),
                { operation.isFinished })
        else { return }
        #expect(
            !operation.isExecuting,
            "A finished operation still reports isExecuting true. \(lesson.see("Finish when the work ends, once"))")
        let outcome = describe(operation.result)
        guard await startAgain(operation, "after the operation finished") else { return }
        // A Task a later start() made would fetch again; give it the time to begin.
        let fetches = { loader.trace.all.filter { $0 == "fetch a began" }.count }
        _ = await comesTrue(within: Bound.scaled(.milliseconds(300))) { fetches() > 1 }
        #expect(
            fetches() == 1 && operation.isFinished && !operation.isExecuting
                && describe(operation.result) == outcome,
            """
            start() was called again while the fetch waited and once after the operation finished. The \
            picture was fetched \(fetches()) times (expected once), and the operation now reports \
            isFinished \(operation.isFinished), isExecuting \(operation.isExecuting) and result \
            \(describe(operation.result)) (it was \(outcome)). The first start() claims the operation; a \
            later one launches nothing. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Start launches a Task and returns"))
            """)
    }

    /// Calls `start()` on a thread of its own and waits, bounded, for it to return.
    private func startAgain(
        _ operation: TracedThumbnail, _ when: String, isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Bool {
        await callOnItsOwnThread(
            "start(), called again \(when),",
            hint: "A later start() must return at once. " + operation.trace.lifecycle(missing: "…") + "\n"
                + lesson.see("Start launches a Task and returns"),
            sourceLocation: sourceLocation
        ) { operation.start() } != nil
    }

    // Look at where start() creates the Task, and the lesson's "Give the Task the operation's
    // priority": a Task made outside any task does not take the operation's quality of service,
    // and .default, the class every operation has until told otherwise, is .medium or none.
    // Covers: C73
    // Paths: values
    @Test(
        "started by hand from a thread of another class, the work runs at the operation's own task priority",
        .preflight,
        arguments: [
            (QualityOfService.userInteractive, QualityOfService.background, TaskPriority.high),
            (.userInitiated, .utility, .high),
            (.utility, .userInitiated, .utility),
            (.background, .userInitiated, .background),
            (.default, .userInitiated, .medium),
        ])
    func workRunsAtTheOperationsPriority(
        service: QualityOfService, threadClass: QualityOfService, expected: TaskPriority
    ) async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        operation.qualityOfService = service
        defer { loader.endSpec(keepingAlive: operation) }

        // A plain thread of another class: on Darwin a Task made there without a priority takes
        // the thread's class, on Linux .medium; neither is the operation's.
        // For .default, passing no priority at all is right too: the Task then takes what a Task made
        // on that thread takes, read there just before start().
        let noPriority = Protected<TaskPriority?>(nil)
        let starter = Thread {
            noPriority.withValue { $0 = Task.currentPriority }
            operation.start()
        }
        starter.qualityOfService = threadClass
        starter.start()
        guard await waitForLaunch(operation, loader) else { return }
        let priority = loader.priority(of: "fetch a")
        let acceptable = service == .default ? [expected, noPriority.value] : [expected]
        #expect(
            acceptable.contains(priority),
            """
            The operation's qualityOfService is .\(service) and start() ran on a thread of class \
            .\(threadClass), but its fetch ran at task priority \(priority.map { "\($0)" } ?? "unknown"); \
            expected \(expected)\(service == .default ? " (or no priority at all)" : ""). The Task must \
            get its priority from the operation, not from where start() happened to run.
            \(lesson.see("Give the Task the operation's priority"))
            """)
    }
}
