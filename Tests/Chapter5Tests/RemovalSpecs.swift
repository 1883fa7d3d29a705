import Chapter5
import Foundation
import KataTestSupport
import Testing

@Suite("A dependency removed before the step starts no longer feeds it")
struct RemovalSpecs {
    // Inputs come from the step's dependencies as they are when it starts. Only a FINISHED
    // dependency is removed here: on Linux removing an unfinished one leaves the step stuck.
    // Covers: C42, C40
    @Test("a finished dependency removed before the step starts is left out of its inputs")
    func removedDependencyIsLeftOut() async throws {
        let recorder = Recorder<Event>()
        let docsQueue = heldQueue("the docs queue (suspended)", recorder: recorder)
        defer { docsQueue.isSuspended = false }
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        let received = Protected<[String: String]?>(nil)
        let report = BuildStep("report") { inputs in
            recorder.record(.start("report"))
            received.withValue { $0 = inputs }
            return "report"
        }
        let lint = BuildStep("lint", work: Build.work("lint", recorder: recorder))
        var plan = BuildPlan()
        plan.add(report, needs: ["lint", "docs"], on: queues[1])
        plan.add(lint, on: queues[0])
        plan.add(BuildStep("docs", work: Build.work("docs", recorder: recorder)), on: docsQueue)
        let hint = lesson.see("Removing a dependency")

        try await launch(plan)
        guard await waitUntil("“lint” to finish", hint: hint, { lint.isFinished }) else { return }
        report.removeDependency(lint)
        recorder.record(.note("lint removed from report"))
        docsQueue.isSuspended = false
        guard
            await waitUntil(
                "“report” to finish", hint: "Timeline: \(recorder.timeline)\n\(hint)",
                { report.isFinished })
        else { return }

        #expect(
            received.value == ["docs": "docs output"],
            """
            “report” lost its dependency on “lint” before it started, so its only input should be \
            [“docs”]; it received \(describe(received.value)).
            Timeline: \(recorder.timeline)
            \(hint)
            """
        )
    }
}
