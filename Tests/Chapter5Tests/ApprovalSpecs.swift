import Chapter5
import Foundation
import KataTestSupport
import Testing

/// Which comes first in an approval spec: the sign-off or the end of the step it also needs.
enum Arrival: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case approvalFirst = "the approval arrives before the package is ready"
    case approvalLast = "the approval arrives after the package is ready"

    var testDescription: String { rawValue }
}

@Suite("Waiting for an outside event is one more dependency, not a custom isReady")
struct ApprovalSpecs {
    // Make the approval an operation that finishes when granted and that the step depends on.
    // An isReady override that skips super ignores dependencies; one that never notifies sticks.
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

        #expect(
            publish.dependencies.contains(signOff),
            "“publish” does not list its approval among its dependencies: make the approval an operation it depends on. \(hint)"
        )
        try await launch(plan)

        func grantFromElsewhere() async -> Bool {
            DispatchQueue.global().async {
                recorder.record(.note("sign-off granted"))
                signOff.grant()
            }
            return await waitUntil(
                "the approval, an operation, to finish once granted",
                hint:
                    "grant() should finish the approval operation; that is what releases the steps waiting for it.\n\(hint)"
            ) { signOff.isFinished }
        }
        switch arrival {
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
            hint: "Timeline: \(recorder.timeline)\n\(hint)"
        ) { publish.isFinished }
        guard ran else { return }

        let startedAt = recorder.position(of: .start("publish")) ?? -1
        for event in [Event.note("sign-off granted"), .finish("package")] {
            #expect(
                (recorder.position(of: event) ?? Int.max) < startedAt,
                "“publish” must wait for both its approval and “package”, but it started before \(event). Timeline: \(recorder.timeline)\n\(hint)"
            )
        }
    }

    // deny() should finish the approval cancelled, which releases the waiting step; the step
    // then notices the cancelled dependency and cancels itself, and its dependents follow.
    // Covers: C41, C39
    @Test("a denied approval releases the waiting step, which cancels instead of publishing")
    func denialCancelsTheStep() async throws {
        let recorder = Recorder<Event>()
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        let signOff = Approval("release sign-off")
        let publish = BuildStep(
            "publish", approval: signOff, work: Build.work("publish", recorder: recorder))
        let announce = BuildStep("announce", work: Build.work("announce", recorder: recorder))
        var plan = BuildPlan()
        plan.add(
            BuildStep("package", work: Build.work("package", recorder: recorder)), on: queues[0])
        plan.add(publish, needs: ["package"], on: queues[1])
        plan.add(announce, needs: ["publish"], on: queues[0])
        let hint = lesson.see("Readiness is a dependency")

        try await launch(plan)
        DispatchQueue.global().async {
            recorder.record(.note("sign-off denied"))
            signOff.deny()
        }
        let released = await waitUntil(
            "“announce” to finish after the sign-off was denied",
            hint:
                "A denied approval should finish (cancelled) and so release “publish”. Timeline: \(recorder.timeline)\n\(hint)"
        ) { announce.isFinished }
        guard released else { return }

        #expect(
            !recorder.started("publish") && !recorder.started("announce"),
            "The sign-off was denied, yet the work ran. Timeline: \(recorder.timeline)\n\(hint)"
        )
        #expect(
            publish.isCancelled && announce.isCancelled,
            "After the denial “publish” is \(publish.isCancelled ? "" : "not ")cancelled and “announce” is \(announce.isCancelled ? "" : "not ")cancelled; expected both. \(hint)"
        )
    }
}
