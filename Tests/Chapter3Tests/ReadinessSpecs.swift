import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("Readiness still follows dependencies", .watched)
struct ReadinessFollowsDependencies {
    // Look for an isReady override in AsyncOperation. Read "Leave isReady alone".
    // Covers: C25
    @Test("the greeting waits for its dependency, then runs and releases its own dependents", .preflight)
    func waitsForItsDependency() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace)
        defer { greeting.pause.open() }
        // The dependency stays out of every queue until the spec runs it by hand.
        let dependency = BlockOperation { trace.record(.dependencyRan) }
        greeting.addDependency(dependency)
        let dependent = sentinel(trace)
        dependent.addDependency(greeting)
        let queue = makeQueue()

        queue.enqueue([greeting, dependent])
        // Give the queue every chance to start the greeting too early: wait until it ran a later operation.
        let probe = BlockOperation { trace.record(.laterOperationRan) }
        queue.addOperation(probe)
        guard
            await waitUntil(
                "an operation added after the greeting to run", hint: lesson.see("Leave isReady alone"),
                { trace.contains(.laterOperationRan) })
        else { return }
        #expect(
            !greeting.isReady,
            """
            The greeting reports isReady true while the operation it depends on is still running. \
            Readiness must follow the dependencies: do not override isReady.
            \(lesson.see("Leave isReady alone"))
            """)
        #expect(
            !trace.contains(.workPaused) && !greeting.isExecuting && !greeting.isFinished,
            "The greeting already started although its dependency is still running. \(lesson.see("Leave isReady alone"))"
        )

        trace.record(.dependencyReleased)
        dependency.start()
        guard await releaseAfterStartReturned(greeting, see: "Leave isReady alone") else { return }
        #expect(
            trace.recorded(.dependencyReleased, before: .workPaused),
            """
            The greeting's work began before its dependency was allowed to finish. \
            \(trace.lifecycle(missing: "…"))
            \(lesson.see("Leave isReady alone"))
            """)
        guard await waitForFinished(greeting) else { return }
        await waitForEffect(
            .sentinelRan, of: greeting, "the sentinel that depends on the greeting to run",
            why: "Nobody heard that the greeting finished: announce isFinished after setting the flag.")
    }
}
