import Chapter5
import Foundation
import KataTestSupport
import Testing

/// Which of two approvals with one title is decided first, and how.
enum TwoSignOffs: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case firstDenied = "the first build's sign-off denied, then the second's granted"
    case firstGranted = "the first build's sign-off granted, then the second's denied"

    var testDescription: String { rawValue }
}

@Suite("Two plans, two approvals: each keeps its own state", .watched)
struct TwoPlansSpecs {
    // Approval.grant() and deny(), BuildStep.main(): two builds each wait for an approval called
    // “release sign-off”. Where is "decided" or "denied" kept: in each approval, or somewhere
    // every approval shares (a static, a table keyed by title)? See "Readiness is a dependency".
    // Covers: C41
    // Paths: interference
    @Test(
        "two approvals with the same title are decided apart, each releasing only its own step",
        arguments: TwoSignOffs.allCases)
    func approvalsWithOneTitleAreDecidedApart(order: TwoSignOffs) async {
        // In a process of its own: a table every approval shares would otherwise be filled by
        // the specs running beside this one, and decide its verdict.
        let name = "buildPlanTwoSignOffs"
        LastWords.forget(name)
        let explanation = Comment(
            rawValue: """
                The child process that decided two approvals with one title stopped before it \
                could judge. \(lesson.see("Readiness is a dependency"))
                """)
        let outcome =
            switch order {
            case .firstDenied:
                await #expect(processExitsWith: .success, explanation) {
                    TwoPlansSpecs.decideTwoSignOffs(.firstDenied)
                }
            case .firstGranted:
                await #expect(processExitsWith: .success, explanation) {
                    TwoPlansSpecs.decideTwoSignOffs(.firstGranted)
                }
            }
        LastWords.explain(name, outcome)
    }

    /// Starts two one-step builds whose approvals share a title, decides one, waits for its
    /// step, then decides the other the opposite way; exits 1 with words if a step does not
    /// follow its own approval. Runs in an exit test.
    static func decideTwoSignOffs(_ order: TwoSignOffs) {
        let name = "buildPlanTwoSignOffs"
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let hint = lesson.see("Readiness is a dependency")
        let queue = OperationQueue()
        let ran = Protected<Set<String>>([])
        func build(_ label: String) -> (Approval, BuildStep) {
            let signOff = Approval("release sign-off")
            let publish = BuildStep("publish", approval: signOff) { _ in
                ran.withValue { _ = $0.insert(label) }
                return "\(label) published"
            }
            var plan = BuildPlan()
            plan.add(publish, on: queue)
            do { try plan.start() } catch {
                LastWords.fail(name, "start() threw “\(error)” for a one-step plan. \(hint)")
            }
            return (signOff, publish)
        }
        let first = build("first")
        let second = build("second")
        let firstGranted = order == .firstGranted
        let steps = [(label: "first", step: first.1, granted: firstGranted), ("second", second.1, !firstGranted)]
        var story: [String] = []
        for (index, approval) in [first.0, second.0].enumerated() {
            let (label, step, granted) = steps[index]
            if granted { approval.grant() } else { approval.deny() }
            story.append("the \(label) build's “release sign-off” \(granted ? "granted" : "denied")")
            guard settles(within: Bound.standard, { step.isFinished }) else {
                LastWords.fail(
                    name,
                    """
                    After \(story.joined(separator: ", then ")), the \(label) build's “publish” \
                    never finished: its approval was decided, yet nothing released it. A decision \
                    kept by title, shared by every approval, makes a second approval with that \
                    title look decided already. Keep the decision in the approval itself.
                    \(hint)
                    """)
            }
            let didRun = ran.value.contains(label)
            if didRun != granted || step.isCancelled == granted {
                LastWords.fail(
                    name,
                    """
                    After \(story.joined(separator: ", then ")), the \(label) build's “publish” \
                    \(didRun ? "ran" : "did not run")\(step.isCancelled ? " and was cancelled" : ""); \
                    it should have \(granted ? "run" : "been cancelled without running"), following \
                    its own approval only. Two approvals with one title are two approvals: keep \
                    each decision in its approval, never in a static or a table keyed by title.
                    \(hint)
                    """)
            }
        }
    }

    // BuildPlan.start(): does the cycle search keep anything between two plans (a static set of
    // steps found sound, a memo by title)? A second plan reuses the first plan's titles with a
    // loop between them; a third is sound again. See "Refuse cycles before you enqueue".
    // Covers: C38
    // Paths: interference
    @Test("start() judges each plan on its own, even one that reuses another plan's titles")
    func eachPlanIsCheckedOnItsOwn() async {
        let name = "buildPlanTitlesReused"
        LastWords.forget(name)
        let outcome = await #expect(
            processExitsWith: .success,
            Comment(
                rawValue: """
                    The child process that started three plans with the same titles stopped \
                    before it could judge. \(lesson.see("Refuse cycles before you enqueue"))
                    """)
        ) {
            TwoPlansSpecs.startPlansWithOneSetOfTitles()
        }
        LastWords.explain(name, outcome)
    }

    /// Starts a sound chain, then a loop, then the sound chain again, all titled “compile”,
    /// “link” and “test”; exits 1 with words if a verdict is not the plan's own.
    static func startPlansWithOneSetOfTitles() {
        let name = "buildPlanTitlesReused"
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let hint = lesson.see("Refuse cycles before you enqueue")
        let held = OperationQueue()
        held.isSuspended = true  // the sound plans' steps wait here; the process ends first
        func plan(_ needs: [String: [String]]) -> BuildPlan {
            var plan = BuildPlan()
            for title in ["test", "link", "compile"] {
                plan.add(BuildStep(title) { _ in title }, needs: needs[title] ?? [], on: held)
            }
            return plan
        }
        let chain = ["test": ["link"], "link": ["compile"]]
        let loop = ["test": ["link"], "link": ["compile"], "compile": ["test"]]
        let plans = [
            ("a sound chain compile → link → test", plan(chain), false),
            ("a loop compile → link → test → compile with the same titles", plan(loop), true),
            ("the sound chain again", plan(chain), false),
        ]
        var story: [String] = []
        for (what, plan, cyclic) in plans {
            LastWords.note(name, "start() crashed for \(what), after \(story.joined(separator: ", ")).")
            let verdict: String
            do {
                try plan.start()
                verdict = "returned normally"
            } catch .cycle(let titles) where cyclic && Set(titles) == ["compile", "link", "test"] {
                verdict = "threw the loop"
            } catch {
                verdict = "threw “\(error)”"
            }
            let expected = cyclic ? "threw the loop" : "returned normally"
            guard verdict == expected else {
                LastWords.fail(
                    name,
                    """
                    start() \(verdict) for \(what)\(story.isEmpty ? "" : ", started after \(story.joined(separator: ", "))"); \
                    expected it to \(cyclic ? "throw BuildError.cycle naming “compile”, “link” and “test”" : "return normally").
                    Each plan is checked on its own: keep the search's marks in start(), not in a \
                    static or a table by title that outlives the call.
                    \(hint)
                    """)
            }
            story.append("\(what) (which \(verdict))")
        }
    }
}
