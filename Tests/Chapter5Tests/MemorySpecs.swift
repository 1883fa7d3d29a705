import Chapter5
import Foundation
import KataTestSupport
import Testing

@Suite("A finished build belongs to whoever keeps it", .watched)
struct MemorySpecs {
    // BuildPlan, BuildStep and Approval: once the build is over and its owners let go, what
    // still holds a step or an approval? A queue lets go of each operation once it finished.
    // See "When the build is over".
    // Covers: C104
    // Paths: memory
    @Test("once a build has ended and its owners let go, its steps and approvals are freed")
    func finishedBuildIsFreed() async {
        // In a process of its own: the build uses plain queues, which let go of its steps, and
        // a plan that wires a step to a dependency after the step finished and was freed makes
        // Foundation touch freed memory later; that fault must cost this spec only.
        let name = "buildPlanFreedWhenOver"
        LastWords.forget(name)
        let outcome = await #expect(
            processExitsWith: .success,
            Comment(
                rawValue: """
                    The child process that ran a build to its end and let it go stopped before it \
                    could judge. \(lesson.see("When the build is over"))
                    """)
        ) {
            MemorySpecs.runToTheEndAndLetGo()
        }
        LastWords.explain(name, outcome)
    }

    /// Runs a small build on plain queues to its end, through every exit a step has (it ran, its
    /// approval was granted, denied, its input was cancelled, it was cancelled itself), lets go
    /// of everything, and exits 1 with words if a step or an approval is still alive. Runs in an
    /// exit test. The specs' `EagerQueue` keeps every step it sees alive, so this build uses
    /// `OperationQueue`s of its own.
    static func runToTheEndAndLetGo() {
        let name = "buildPlanFreedWhenOver"
        exitIfStillRunning(after: Bound.standard * 3, status: 3)
        let hint = lesson.see("When the build is over")
        // Everything the build holds is made in this closure and let go when it returns.
        let left: [(title: String, object: WeakReference<Operation>)] = {
            let queues = [OperationQueue(), OperationQueue()]
            let signOff = Approval("release sign-off")
            let review = Approval("docs review")
            let steps = ["fetch", "compile", "link", "docs", "publish docs", "lint"].map { title in
                BuildStep(
                    title,
                    approval: title == "compile" ? signOff : title == "docs" ? review : nil
                ) { _ in "\(title) output" }
            }
            let needs = [
                "compile": ["fetch"], "link": ["compile"], "docs": ["fetch"],
                "publish docs": ["docs"], "lint": ["fetch"],
            ]
            var plan = BuildPlan()
            for (index, step) in steps.enumerated() {
                plan.add(step, needs: needs[step.title] ?? [], on: queues[index % 2])
            }
            steps[5].cancel()
            do { try plan.start() } catch {
                LastWords.fail(name, "start() threw “\(error)” for a sound plan. \(hint)")
            }
            for step in [steps[1], steps[3]] {
                TwoPlansSpecs.failUnlessWaitingOnAnOperation(step, name: name)
            }
            signOff.grant()
            review.deny()
            guard settles(within: Bound.standard, { steps.allSatisfy(\.isFinished) }) else {
                let open = steps.filter { !$0.isFinished }.map { "“\($0.title)”" }
                LastWords.fail(
                    name,
                    """
                    The build never ended: \(open.joined(separator: ", ")) did not finish after \
                    “release sign-off” was granted and “docs review” denied.
                    \(lesson.see("Readiness is a dependency"))
                    """)
            }
            return (steps + [signOff, review]).map {
                (($0 as? BuildStep)?.title ?? ($0 as? Approval)?.title ?? "?", WeakReference($0))
            }
        }()
        // The queues drop their last references on their own threads, just after each finish.
        _ = settles(within: Bound.standard) { left.allSatisfy { $0.object.value == nil } }
        let alive = left.filter { $0.object.value != nil }.map { "“\($0.title)”" }
        guard alive.isEmpty else {
            LastWords.fail(
                name,
                """
                The build ended (“compile” and “link” ran, “docs” and “publish docs” were \
                cancelled by a denial, “lint” was cancelled) and the spec let go of everything, \
                yet \(alive.joined(separator: ", ")) \(alive.count == 1 ? "is" : "are") still alive.
                Something outside the build keeps them: a static list of steps or approvals that \
                is never emptied, or an approval that keeps the steps waiting for it (each of them \
                already keeps the approval among its dependencies, so the two keep each other).
                \(hint)
                """)
        }
    }
}
