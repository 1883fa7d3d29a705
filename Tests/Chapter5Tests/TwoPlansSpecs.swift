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
            failUnlessWaitingOnAnOperation(publish, name: name)
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

    /// Exits 1 with words at once if `step` depends on no operation besides build steps: then
    /// nothing a decision finishes can release it, and waiting out a bound would tell no more.
    static func failUnlessWaitingOnAnOperation(_ step: BuildStep, name: String) {
        guard !step.dependencies.contains(where: { !($0 is BuildStep) }) else { return }
        LastWords.fail(
            name,
            """
            Once its plan started, “\(step.title)” depended on no operation that stands for its \
            approval, so no decision can release it. Make the approval an operation that finishes \
            when it is decided, and have the step depend on it.
            \(lesson.see("Readiness is a dependency"))
            """)
    }

    // BuildPlan.start(): does the cycle search keep anything between two plans (a static set of
    // steps found sound, a memo by title or by a step's identity)? A second plan reuses the
    // first plan's titles with a loop between them, a third is sound again, and a fourth is the
    // loop again, made after the third ran and was freed. See "Refuse cycles before you enqueue".
    // Covers: C38
    // Paths: interference, memory
    @Test("start() judges each plan on its own, even one that reuses another plan's titles")
    func eachPlanIsCheckedOnItsOwn() async {
        let name = "buildPlanTitlesReused"
        LastWords.forget(name)
        let outcome = await #expect(
            processExitsWith: .success,
            Comment(
                rawValue: """
                    The child process that started four plans with the same titles stopped \
                    before it could judge. \(lesson.see("Refuse cycles before you enqueue"))
                    """)
        ) {
            TwoPlansSpecs.startPlansWithOneSetOfTitles()
        }
        LastWords.explain(name, outcome)
    }

    /// Starts a sound chain, then a loop, then the sound chain again, all titled “compile”,
    /// “link” and “test”; exits 1 with words if a verdict is not the plan's own.
    ///
    /// Each sound chain runs to the end on a queue of its own and is let go, on this thread,
    /// before the next plan is made: the allocator then usually hands the next plan's steps the
    /// freed steps' memory, so marks kept by a step's identity (`ObjectIdentifier`) outlive their
    /// steps and fall on the loop's new ones, as marks kept by title do.
    static func startPlansWithOneSetOfTitles() {
        let name = "buildPlanTitlesReused"
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let hint = lesson.see("Refuse cycles before you enqueue")
        let held = OperationQueue()
        held.isSuspended = true  // a loop wired by mistake waits here; the process ends first
        func plan(_ needs: [String: [String]], on queue: OperationQueue) -> BuildPlan {
            var plan = BuildPlan()
            for title in ["test", "link", "compile"] {
                plan.add(BuildStep(title) { _ in title }, needs: needs[title] ?? [], on: queue)
            }
            return plan
        }
        let chain = ["test": ["link"], "link": ["compile"]]
        let loop = ["test": ["link"], "link": ["compile"], "compile": ["test"]]
        let plans = [
            ("a sound chain compile → link → test", chain, false),
            ("a loop compile → link → test → compile with the same titles", loop, true),
            ("the sound chain again", chain, false),
            ("the loop again, after the sound chain had run and gone", loop, true),
        ]
        var story: [String] = []
        for (what, needs, cyclic) in plans {
            LastWords.note(name, "start() crashed for \(what), after \(story.joined(separator: ", ")).")
            let verdict: String
            do {
                let queue = cyclic ? held : OperationQueue()
                let planned = plan(needs, on: queue)
                try planned.start()
                // Bounded by the exit above. The plan, kept to here, lets its steps go last.
                withExtendedLifetime(planned) {
                    if !cyclic { queue.waitUntilAllOperationsAreFinished() }
                }
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
                    static or a table that outlives the call, whether by title or by a step's \
                    identity (a new step is often made where a finished one was freed).
                    \(hint)
                    """)
            }
            story.append("\(what) (which \(verdict))")
        }
    }

    // Approval.grant() and deny(): where is "decided" kept? A table keyed by each approval's
    // identity (`ObjectIdentifier`) outlives the approval, and a new approval is often made at
    // the address of one just decided and freed. See "Readiness is a dependency".
    // Covers: C41
    // Paths: memory, interference
    @Test("a new approval is undecided, though approvals decided before it are gone")
    func newApprovalIsUndecided() async {
        // In a process of its own: approvals that the specs beside this one decide and free would
        // otherwise decide which addresses a shared table holds.
        let name = "buildPlanApprovalsReborn"
        LastWords.forget(name)
        let outcome = await #expect(
            processExitsWith: .success,
            Comment(
                rawValue: """
                    The child process that decided approvals one after another stopped before it \
                    could judge. \(lesson.see("Readiness is a dependency"))
                    """)
        ) {
            TwoPlansSpecs.decideApprovalsOneAfterAnother()
        }
        LastWords.explain(name, outcome)
    }

    /// Round after round, decides an approval and lets it go on this thread, then makes a new
    /// one, a step that waits for it, and decides the new one the other way; exits 1 with words
    /// if a step does not follow its own approval.
    static func decideApprovalsOneAfterAnother() {
        let name = "buildPlanApprovalsReborn"
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let hint = lesson.see("Readiness is a dependency")
        let rounds = 12
        for round in 1...rounds {
            let granted = round % 2 == 0
            do {
                // Decided with no step waiting, and freed here at the end of the block: the next
                // approval is usually made at its address (glibc, Linux).
                let earlier = Approval("release sign-off")
                if granted { earlier.deny() } else { earlier.grant() }
            }
            let signOff = Approval("release sign-off")
            let ran = Protected(false)
            let publish = BuildStep("publish", approval: signOff) { _ in
                ran.withValue { $0 = true }
                return "published"
            }
            let queue = OperationQueue()
            var plan = BuildPlan()
            plan.add(publish, on: queue)
            do { try plan.start() } catch {
                LastWords.fail(name, "start() threw “\(error)” for a one-step plan. \(hint)")
            }
            failUnlessWaitingOnAnOperation(publish, name: name)
            if granted { signOff.grant() } else { signOff.deny() }
            let what = """
                In round \(round), a new “release sign-off” was \(granted ? "granted" : "denied") \
                just after an earlier approval had been \(granted ? "denied" : "granted") and freed
                """
            guard settles(within: Bound.standard, { publish.isFinished }) else {
                LastWords.fail(
                    name,
                    """
                    \(what); the “publish” step waiting for the new one never finished: its \
                    approval was decided, yet nothing released it. A decision kept outside the \
                    approval, in a table keyed by its identity, outlives it, and a new approval \
                    made at the freed one's address looks decided already. Keep the decision in \
                    the approval itself.
                    \(hint)
                    """)
            }
            if ran.value != granted || publish.isCancelled == granted {
                LastWords.fail(
                    name,
                    """
                    \(what); “publish” \(ran.value ? "ran" : "did not run")\
                    \(publish.isCancelled ? " and was cancelled" : ""), but it should have \
                    \(granted ? "run" : "been cancelled without running"), following its own \
                    approval only. Keep each decision in its approval, never in a table that \
                    outlives it.
                    \(hint)
                    """)
            }
        }
    }
}
