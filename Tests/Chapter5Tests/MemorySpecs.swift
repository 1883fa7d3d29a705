import Chapter5
import Foundation
import KataTestSupport
import Testing

@Suite("A finished build belongs to whoever keeps it", .watched)
struct MemorySpecs {
    /// Runs a small build on plain queues to its end, through every exit a step has (it ran, its
    /// approval was granted, denied, its input was cancelled, it was cancelled itself), and
    /// returns weak references to its steps and approvals by title; nil if the build did not end
    /// (the issue is recorded). The specs' `EagerQueue` keeps every step it sees alive, so this
    /// build uses `OperationQueue`s of its own.
    static func runToTheEnd(
        _ recorder: Recorder<Event>
    ) async throws -> [(title: String, object: WeakReference<Operation>)]? {
        let queues = [OperationQueue(), OperationQueue()]
        let signOff = Approval("release sign-off")
        let review = Approval("docs review")
        let steps = [
            BuildStep("fetch", work: Build.work("fetch", recorder: recorder)),
            BuildStep("compile", approval: signOff, work: Build.work("compile", recorder: recorder)),
            BuildStep("link", work: Build.work("link", recorder: recorder)),
            BuildStep("docs", approval: review, work: Build.work("docs", recorder: recorder)),
            BuildStep("publish docs", work: Build.work("publish docs", recorder: recorder)),
            BuildStep("lint", work: Build.work("lint", recorder: recorder)),
        ]
        let needs = [
            "compile": ["fetch"], "link": ["compile"], "docs": ["fetch"],
            "publish docs": ["docs"], "lint": ["fetch"],
        ]
        var plan = BuildPlan()
        for (index, step) in steps.enumerated() {
            plan.add(step, needs: needs[step.title] ?? [], on: queues[index % 2])
        }
        steps[5].cancel()
        try await launch(plan)
        signOff.grant()
        review.deny()
        guard
            await waitUntil(
                "every step of the build to finish",
                hint: "Timeline: \(recorder.timeline)\n" + lesson.see("Readiness is a dependency"),
                givingUpWhen: {
                    // A step that depends on nothing standing for its approval is never released.
                    let stuck = [steps[1], steps[3]].filter { step in
                        !step.dependencies.contains { !($0 is BuildStep) }
                    }
                    return stuck.isEmpty
                        ? nil
                        : "\(stuck.map { "“\($0.title)”" }.joined(separator: " and ")) depend on no operation that stands for an approval, so no decision can release them"
                },
                { steps.allSatisfy(\.isFinished) })
        else { return nil }
        return (steps + [signOff, review]).map {
            (($0 as? BuildStep)?.title ?? ($0 as? Approval)?.title ?? "?", WeakReference($0))
        }
    }

    // BuildPlan, BuildStep and Approval: once the build is over and its owners let go, what
    // still holds a step or an approval? A queue lets go of each operation once it finished.
    // See "When the build is over".
    // Covers: C104
    // Paths: memory
    @Test("once a build has ended and its owners let go, its steps and approvals are freed")
    func finishedBuildIsFreed() async throws {
        let recorder = Recorder<Event>()
        guard let left = try await Self.runToTheEnd(recorder) else { return }
        // The queues drop their last references on their own threads, just after each finish.
        _ = await comesTrue(within: Bound.standard) { left.allSatisfy { $0.object.value == nil } }
        let alive = left.filter { $0.object.value != nil }.map { "“\($0.title)”" }
        #expect(
            alive.isEmpty,
            """
            The build ended (“compile” and “link” ran, “docs” and “publish docs” were cancelled \
            by a denial, “lint” was cancelled) and the spec let go of everything, yet \
            \(alive.joined(separator: ", ")) \(alive.count == 1 ? "is" : "are") still alive.
            Something outside the build keeps them: a static list of steps or approvals that \
            is never emptied, or an approval that keeps the steps waiting for it (each of them \
            already keeps the approval among its dependencies, so the two keep each other).
            \(lesson.see("When the build is over"))
            """
        )
    }
}
