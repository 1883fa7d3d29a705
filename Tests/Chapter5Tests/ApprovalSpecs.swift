import Chapter5
import Foundation
import KataTestSupport
import Testing

/// Which comes first in an approval spec: the sign-off or the end of the step it also needs.
enum Arrival: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case approvalBeforeStart = "the approval arrives before the plan starts"
    case approvalFirst = "the approval arrives before the package is ready"
    case approvalLast = "the approval arrives after the package is ready"

    var testDescription: String { rawValue }
}

/// A step's policy for cancelled inputs, as a spec argument.
enum Policy: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case cancel = "a step that cancels when an input is cancelled"
    case runWithout = "a step that runs without a cancelled input"

    var value: CancelledInputPolicy {
        switch self {
        case .cancel: .cancel
        case .runWithout: .runWithout
        }
    }

    var testDescription: String { rawValue }
}

/// Two decisions on one approval, made back to back.
enum Decisions: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case grantThenDeny = "granted, then denied"
    case denyThenGrant = "denied, then granted"

    var testDescription: String { rawValue }
}

/// Whether `step` waits on some operation besides the build steps it needs, and if not, records why.
///
/// Any operation will do: the approval itself, or one it owns. What matters is that the wait
/// is a dependency, which the queue honours, rather than a condition hidden in `isReady`.
func waitsOnAnOperation(
    _ step: BuildStep, for approval: Approval, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    let others = step.dependencies.filter { !($0 is BuildStep) }
    guard others.isEmpty else { return true }
    Issue.record(
        """
        Once the plan started, “\(step.title)” depended on \(describe(Set(step.dependencies.compactMap { ($0 as? BuildStep)?.title }))) \
        only: nothing stands for “\(approval.title)”. Make the approval an operation that finishes \
        when it is decided, and have the step depend on it.
        \(lesson.see("Readiness is a dependency"))
        """,
        sourceLocation: sourceLocation
    )
    return false
}

@Suite("Waiting for an outside event is one more dependency, not a custom isReady", .watched)
struct ApprovalSpecs {
    // Approval.grant() and BuildStep's init: the step must wait for the approval AND its inputs.
    // See "Readiness is a dependency".
    // Covers: C41, C35
    @Test(
        "a step that needs an approval starts only once it is granted and its inputs are done",
        arguments: Arrival.allCases)
    func approvalOpensTheStep(arrival: Arrival) async throws {
        let recorder = Recorder<Event>()
        let packaging = heldQueue("the packaging queue (suspended)", recorder: recorder)
        defer { packaging.isSuspended = false }
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        let signOff = Approval("release sign-off")
        let package = BuildStep("package", work: Build.work("package", recorder: recorder))
        let publish = BuildStep(
            "publish", approval: signOff, work: Build.work("publish", recorder: recorder))
        var plan = BuildPlan()
        plan.add(package, on: packaging)
        plan.add(publish, needs: ["package"], on: queues[1])
        let hint = lesson.see("Readiness is a dependency")

        func grantFromElsewhere() async -> Bool {
            DispatchQueue.global().async {
                recorder.record(.note("sign-off granted"))
                signOff.grant()
                recorder.record(.note("grant() returned"))
            }
            return await waitUntil("grant() to return", hint: hint) {
                recorder.contains(.note("grant() returned"))
            }
        }
        // An approval already in when the plan starts: the queue asks the step's readiness as it
        // is enqueued, and “package” is still held, so only the dependency can keep “publish” back.
        if arrival == .approvalBeforeStart {
            guard await grantFromElsewhere() else { return }
        }
        try await launch(plan)
        guard waitsOnAnOperation(publish, for: signOff) else { return }

        switch arrival {
        case .approvalBeforeStart:
            packaging.isSuspended = false
        case .approvalFirst:
            guard await grantFromElsewhere() else { return }
            packaging.isSuspended = false
        case .approvalLast:
            packaging.isSuspended = false
            guard await waitUntil("“package” to finish", hint: hint, { package.isFinished }) else {
                return
            }
            guard await grantFromElsewhere() else { return }
        }
        let ran = await waitUntil(
            "“publish” to finish once approved and packaged",
            hint: """
                grant() must finish an operation that “publish” depends on: that is what releases it. \
                Timeline: \(recorder.timeline)
                \(hint)
                """
        ) { publish.isFinished }
        guard ran else { return }

        let startedAt = recorder.position(of: .start("publish")) ?? -1
        for event in [Event.note("sign-off granted"), .finish("package")] {
            #expect(
                (recorder.position(of: event) ?? Int.max) < startedAt,
                """
                “publish” must wait for both its approval and “package”, but it started before \(event) \
                (\(arrival.rawValue)). A queue asks a step's isReady when it is enqueued: an override that \
                answers from the approval alone, without super.isReady, lets the step start before the \
                steps it needs. Timeline: \(recorder.timeline)
                \(hint)
                """
            )
        }
    }

    // Approval.deny() and BuildStep.main(): a denied approval must finish (cancelled) to release
    // the step, and a cancelled approval stops the step whatever its policy for cancelled inputs.
    // Covers: C41, C39
    @Test(
        "a denied approval releases the waiting step, which cancels instead of publishing",
        .preflightCancelledInputs, arguments: Policy.allCases)
    func denialCancelsTheStep(policy: Policy) async throws {
        let recorder = Recorder<Event>()
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        let signOff = Approval("release sign-off")
        let publish = BuildStep(
            "publish", ifInputCancelled: policy.value, approval: signOff,
            work: Build.work("publish", recorder: recorder))
        let announce = BuildStep("announce", work: Build.work("announce", recorder: recorder))
        var plan = BuildPlan()
        plan.add(
            BuildStep("package", work: Build.work("package", recorder: recorder)), on: queues[0])
        plan.add(publish, needs: ["package"], on: queues[1])
        plan.add(announce, needs: ["publish"], on: queues[0])
        let hint = lesson.see("Readiness is a dependency")

        try await launch(plan)
        guard waitsOnAnOperation(publish, for: signOff) else { return }
        DispatchQueue.global().async {
            recorder.record(.note("sign-off denied"))
            signOff.deny()
        }
        let released = await waitUntil(
            "“announce” to finish after the sign-off was denied",
            hint: """
                A denied approval must still finish (cancelled): a cancelled operation that is never \
                started releases nobody. Timeline: \(recorder.timeline)
                \(hint)
                """
        ) { announce.isFinished }
        guard released else { return }

        #expect(
            !recorder.started("publish") && !recorder.started("announce"),
            """
            The sign-off was denied, yet the work ran\
            \(policy == .runWithout ? " (“publish” runs without cancelled inputs, but a denied approval is not an input: it forbids the step)" : "").
            Timeline: \(recorder.timeline)
            \(hint)
            """
        )
        #expect(
            publish.isCancelled && announce.isCancelled,
            "After the denial “publish” is \(publish.isCancelled ? "" : "not ")cancelled and “announce” is \(announce.isCancelled ? "" : "not ")cancelled; expected both. \(hint)"
        )
    }

    // Approval.grant() and deny(): an approval is decided once. The later call must change
    // nothing that the waiting step sees afterwards. See "Readiness is a dependency".
    // Covers: C41
    // Paths: reuse
    @Test(
        "the first decision on an approval stands; a second one changes nothing",
        arguments: Decisions.allCases)
    func firstDecisionStands(decisions: Decisions) async throws {
        let recorder = Recorder<Event>()
        let packaging = heldQueue("the packaging queue (suspended)", recorder: recorder)
        defer { packaging.isSuspended = false }
        let queue = EagerQueue("queue B", recorder: recorder)
        let signOff = Approval("release sign-off")
        let publish = BuildStep(
            "publish", approval: signOff, work: Build.work("publish", recorder: recorder))
        var plan = BuildPlan()
        plan.add(
            BuildStep("package", work: Build.work("package", recorder: recorder)), on: packaging)
        plan.add(publish, needs: ["package"], on: queue)
        let hint = lesson.see("Readiness is a dependency")

        try await launch(plan)
        guard waitsOnAnOperation(publish, for: signOff) else { return }
        DispatchQueue.global().async {
            switch decisions {
            case .grantThenDeny:
                recorder.record(.note("granted"))
                signOff.grant()
                recorder.record(.note("denied"))
                signOff.deny()
            case .denyThenGrant:
                recorder.record(.note("denied"))
                signOff.deny()
                recorder.record(.note("granted"))
                signOff.grant()
            }
            recorder.record(.note("both decisions returned"))
        }
        guard
            await waitUntil(
                "grant() and deny() to return", hint: hint,
                { recorder.contains(.note("both decisions returned")) })
        else { return }
        packaging.isSuspended = false
        guard
            await waitUntil(
                "“publish” to finish once the approval was decided and “package” done",
                hint: "Timeline: \(recorder.timeline)\n\(hint)", { publish.isFinished })
        else { return }

        let granted = decisions == .grantThenDeny
        #expect(
            recorder.started("publish") == granted && publish.isCancelled != granted,
            """
            The approval was \(decisions.rawValue): the first decision should stand, so “publish” \
            should \(granted ? "run" : "be cancelled without running"); it \
            \(recorder.started("publish") ? "ran" : "did not run")\(publish.isCancelled ? " and is cancelled" : "").
            Timeline: \(recorder.timeline)
            \(hint)
            """
        )
    }

    // Approval.grant() and deny(): is "decided" read and set in one locked step? A grant and a
    // denial made at the same moment, from two threads, must decide the approval once. The
    // window lies between two lines of the approval, where nothing of the spec's runs, so the
    // spec repeats: two threads sweep the same approvals, one granting, one denying. The thread
    // that loses a claim returns at once and catches up, so the two meet on one approval again
    // and again: 50 rounds of 4,000 approvals kill a claim read and set in two locked steps, one
    // read from `isFinished`, and one marked after acting, 10 of 10 runs each, alone with the
    // other core busy (measured on Linux, Swift 6.3.1); correct code takes well under a second.
    // See "Readiness is a dependency".
    // Covers: C41
    // Paths: reuse
    @Test("a grant and a denial at the same moment, from two threads, decide an approval once")
    func simultaneousDecisionsDecideOnce() async {
        // In a process of its own: an approval started from two threads at once traps on Linux.
        let name = "buildPlanDecisionsAtOnce"
        LastWords.forget(name)
        let outcome = await #expect(
            processExitsWith: .success,
            Comment(
                rawValue: """
                    The child process that granted and denied the same approvals at the same \
                    moment stopped before it could judge. \(lesson.see("Readiness is a dependency"))
                    """)
        ) {
            ApprovalSpecs.decideEachApprovalTwiceAtOnce()
        }
        LastWords.explain(name, outcome)
    }

    /// Round after round, makes approvals, a step waiting for some of them, and two threads that
    /// one semaphore releases together: one grants every approval in order, the other denies
    /// every one in the same order. Exits 1 with words if a waiting step is never released or
    /// both runs and is cancelled; a trap ends the child with a signal and the words noted first.
    static func decideEachApprovalTwiceAtOnce() {
        let name = "buildPlanDecisionsAtOnce"
        exitIfStillRunning(after: Bound.standard * 4, status: 3)
        let hint = lesson.see("Readiness is a dependency")
        let rounds = 50
        let approvalsPerRound = 4000
        let watchedEvery = 100  // every 100th approval has a step waiting for it
        let queue = OperationQueue()
        for round in 1...rounds {
            let approvals = (0..<approvalsPerRound).map { Approval("sign-off \($0)") }
            let ran = Protected<Set<String>>([])
            var steps: [BuildStep] = []
            var plan = BuildPlan()
            for index in stride(from: 0, to: approvalsPerRound, by: watchedEvery) {
                let title = "publish \(index)"
                let step = BuildStep(title, approval: approvals[index]) { _ in
                    ran.withValue { _ = $0.insert(title) }
                    return title
                }
                steps.append(step)
                plan.add(step, on: queue)
            }
            do { try plan.start() } catch {
                LastWords.fail(name, "start() threw “\(error)” for a plan of independent steps. \(hint)")
            }
            TwoPlansSpecs.failUnlessWaitingOnAnOperation(steps[0], name: name)
            LastWords.note(
                name,
                """
                The child ended in round \(round) of \(rounds), while one thread called grant() \
                and another deny() on each of \(approvalsPerRound) approvals at the same moment. \
                Ended by a signal (a trap), it means both calls found an approval undecided and \
                both started it: on Linux an operation started from two threads at once, or while \
                it is still executing, traps. Read "decided" and set it in one locked step, and \
                let only the call that set it start or cancel anything.
                \(hint)
                """)
            let go = DispatchSemaphore(value: 0)
            let swept = DispatchGroup()
            for granting in [true, false] {
                swept.enter()
                Thread.detachNewThread {
                    go.wait()
                    for approval in approvals {
                        if granting { approval.grant() } else { approval.deny() }
                    }
                    swept.leave()
                }
            }
            go.signal()
            go.signal()
            swept.wait()
            guard settles(within: Bound.standard, { steps.allSatisfy(\.isFinished) }) else {
                let stuck = steps.filter { !$0.isFinished }.map { "“\($0.title)”" }
                LastWords.fail(
                    name,
                    """
                    In round \(round), each approval was granted and denied at the same moment; \
                    \(stuck.count) of \(steps.count) steps waiting for one (\(stuck.prefix(3).joined(separator: ", "))…) \
                    never finished. Whichever decision comes first must finish an operation \
                    the step depends on; the other must change nothing.
                    \(hint)
                    """)
            }
            let both = steps.filter { ran.value.contains($0.title) && $0.isCancelled }
            if let step = both.first {
                LastWords.fail(
                    name,
                    """
                    In round \(round), “\(step.title)” ran its work and is cancelled too: its \
                    approval, granted and denied at the same moment, acted on both decisions. \
                    Only the call that claims the decision may act.
                    \(hint)
                    """)
            }
        }
    }
}
