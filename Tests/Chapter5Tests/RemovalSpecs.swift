import Chapter5
import Foundation
import KataTestSupport
import Testing

/// How the dependency that a spec removes ended.
enum Ending: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case succeeded = "a dependency that finished with an output"
    case cancelled = "a dependency that was cancelled"
    case denied = "an approval that was denied"

    var testDescription: String { rawValue }
}

@Suite("A dependency removed before the step starts no longer feeds it", .watched)
struct RemovalSpecs {
    // BuildStep.main(): take the inputs, and the cancelled dependencies (a denied approval
    // included), from `dependencies` as it is when the step runs, not from a list or a property
    // kept earlier. See "Removing a dependency".
    // Covers: C42, C40, C39
    @Test(
        "a finished dependency removed before the step starts neither feeds nor cancels it",
        arguments: Ending.allCases)
    func removedDependencyIsLeftOut(ending: Ending) async throws {
        let recorder = Recorder<Event>()
        let docsQueue = heldQueue("the docs queue (suspended)", recorder: recorder)
        defer { docsQueue.isSuspended = false }
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        let signOff = Approval("report sign-off")
        let received = Protected<[String: String]?>(nil)
        let report = BuildStep("report", approval: ending == .denied ? signOff : nil) { inputs in
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

        if ending == .cancelled {
            recorder.record(.note("lint cancelled"))
            lint.cancel()
        }
        try await launch(plan)
        guard await waitUntil("“lint” to finish", hint: hint, { lint.isFinished }) else { return }
        let removed: String
        let expected: [String: String]
        switch ending {
        case .succeeded, .cancelled:
            report.removeDependency(lint)
            recorder.record(.note("lint removed from report"))
            removed = "“lint” (\(ending.rawValue))"
            expected = ["docs": "docs output"]
        case .denied:
            // Whatever stands for the approval: the approval itself, or an operation it owns.
            guard waitsOnAnOperation(report, for: signOff) else { return }
            let standIns = report.dependencies.filter { !($0 is BuildStep) }
            DispatchQueue.global().async {
                recorder.record(.note("sign-off denied"))
                signOff.deny()
            }
            // Linux lowers no count for an unfinished dependency removed: wait until it finished.
            guard
                await waitUntil(
                    "the denied “report sign-off” to finish",
                    hint: """
                        A denied approval must still finish (cancelled). Timeline: \(recorder.timeline)
                        \(lesson.see("Readiness is a dependency"))
                        """,
                    { standIns.allSatisfy(\.isFinished) })
            else { return }
            standIns.forEach(report.removeDependency)
            recorder.record(.note("sign-off removed from report"))
            removed = "“report sign-off” (\(ending.rawValue))"
            expected = ["docs": "docs output", "lint": "lint output"]
        }
        docsQueue.isSuspended = false
        guard
            await waitUntil(
                "“report” to finish", hint: "Timeline: \(recorder.timeline)\n\(hint)",
                { report.isFinished })
        else { return }

        #expect(
            received.value == expected && !report.isCancelled,
            """
            “report” lost its dependency on \(removed) before it started, so it should run with \
            \(describe(Set(expected.keys))) as its only inputs; it received \(describe(received.value))\
            \(report.isCancelled ? " and was cancelled" : "").
            A step's inputs, and the cancelled dependencies that stop it, are its dependencies as \
            they are when it runs.
            Timeline: \(recorder.timeline)
            \(hint)
            """
        )
    }
}
