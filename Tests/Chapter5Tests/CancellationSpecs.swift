import Chapter5
import Foundation
import KataTestSupport
import Testing

@Suite("A cancelled step releases the steps that need it, and each of them decides", .watched)
struct CancellationSpecs {
    // BuildStep.main(): what does a step do when a dependency was cancelled, and what do its
    // own dependents then see? And what of a step on the same queue that does not need the
    // cancelled one? See "When a dependency is cancelled".
    // Covers: C39
    // Paths: interference
    @Test(
        "a cancelled required input cancels the step, and the cancellation travels down the chain",
        .preflightCancelledInputs)
    func requiredInputCancelsTheChain() async throws {
        let recorder = Recorder<Event>()
        let network = heldQueue("the network queue (suspended)", recorder: recorder)
        defer { network.isSuspended = false }
        let queues = [
            network, EagerQueue("queue A", recorder: recorder),
            EagerQueue("queue B", recorder: recorder),
        ]
        let titles = ["download", "checksum", "unpack", "install"]
        var steps: [String: BuildStep] = [:]
        var plan = BuildPlan()
        for (index, title) in titles.enumerated() {
            let step = BuildStep(title, work: Build.work(title, recorder: recorder))
            steps[title] = step
            // “unpack” also needs a sound “toolchain”, listed first: every input counts.
            let needs = index == 0 ? [] : (title == "unpack" ? ["toolchain"] : []) + [titles[index - 1]]
            plan.add(step, needs: needs, on: queues[index == 0 ? 0 : 1 + index % 2])
        }
        plan.add(
            BuildStep("toolchain", work: Build.work("toolchain", recorder: recorder)), on: queues[1])
        // “licenses” shares queue A with “unpack” and waits for “download”, not for “checksum”.
        let licenses = BuildStep("licenses", work: Build.work("licenses", recorder: recorder))
        plan.add(licenses, needs: ["download"], on: queues[1])
        let hint = lesson.see("When a dependency is cancelled")

        try await launch(plan)
        recorder.record(.note("checksum cancelled"))
        steps["checksum"]?.cancel()
        let released = await waitUntil(
            "“install” to finish after “checksum” was cancelled",
            hint:
                "A cancelled step counts as finished and releases its dependents. Timeline: \(recorder.timeline)\n\(hint)"
        ) { steps["install"]?.isFinished ?? false }
        guard released else { return }

        for title in ["checksum", "unpack", "install"] {
            #expect(
                !recorder.started(title),
                """
                “\(title)” ran its work, but once “checksum” is cancelled nothing from it down the chain should run.
                A dependent with a cancelled required input, whichever of its inputs that is, must cancel itself instead of running.
                Timeline: \(recorder.timeline)
                \(hint)
                """
            )
        }
        for title in ["unpack", "install"] {
            #expect(
                steps[title]?.isCancelled == true && steps[title]?.output == nil,
                "“\(title)” finished without being cancelled; call cancel() on it so that the steps after it learn too. \(hint)"
            )
        }

        recorder.record(.note("download released"))
        network.isSuspended = false
        guard
            await waitUntil(
                "“licenses” to finish once “download” was released",
                hint: "Timeline: \(recorder.timeline)\n\(hint)", { licenses.isFinished })
        else { return }
        #expect(
            recorder.started("licenses") && !licenses.isCancelled,
            """
            “licenses” needs only “download” and shares queue A with “unpack”; it should run once \
            “download” is done, but it \(licenses.isCancelled ? "was cancelled" : "did not run").
            A step with a cancelled input cancels itself (cancel() on the step), not its queue: \
            cancelAllOperations() also cancels every step on that queue that never needed the \
            cancelled one, this plan's or another's.
            Timeline: \(recorder.timeline)
            \(hint)
            """
        )
    }

    // BuildStep.main() with the policy .runWithout: which dependencies feed the step? One was
    // cancelled while its work ran and may still hold an output. See "When a dependency is cancelled".
    // Covers: C39
    @Test(
        "a cancelled optional input releases the step, which runs without it, even one cancelled while it worked",
        .preflightCancelledInputs)
    func optionalInputIsLeftOut() async throws {
        let recorder = Recorder<Event>()
        let network = heldQueue("the network queue (suspended)", recorder: recorder)
        defer { network.isSuspended = false }
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        let received = Protected<[String: String]?>(nil)

        var plan = BuildPlan()
        plan.add(
            BuildStep("download", work: Build.work("download", recorder: recorder)), on: network)
        let checksum = BuildStep("checksum", work: Build.work("checksum", recorder: recorder))
        plan.add(checksum, needs: ["download"], on: queues[1])
        plan.add(
            BuildStep("changelog", work: Build.work("changelog", recorder: recorder)), on: queues[0]
        )
        // “signature” is cancelled in the middle of its work, which then returns all the same.
        let signing = Protected<BuildStep?>(nil)
        let signature = BuildStep("signature") { _ in
            recorder.record(.start("signature"))
            recorder.record(.note("signature cancelled while working"))
            signing.withValue { $0.take() }?.cancel()
            recorder.record(.finish("signature"))
            return "signature output"
        }
        signing.withValue { $0 = signature }
        plan.add(signature, on: queues[0])
        let notes = BuildStep("release notes", ifInputCancelled: .runWithout) { inputs in
            recorder.record(.start("release notes"))
            received.withValue { $0 = inputs }
            return "notes from \(inputs.keys.sorted())"
        }
        plan.add(notes, needs: ["checksum", "signature", "changelog"], on: queues[1])
        let hint = lesson.see("When a dependency is cancelled")

        try await launch(plan)
        recorder.record(.note("checksum cancelled"))
        checksum.cancel()
        let released = await waitUntil(
            "“release notes” to finish after “checksum” was cancelled",
            hint: "Timeline: \(recorder.timeline)\n\(hint)"
        ) { notes.isFinished }
        guard released else { return }

        let cancelledAt = recorder.position(of: .note("checksum cancelled")) ?? 0
        let startedAt = recorder.position(of: .start("release notes"))
        #expect(
            startedAt.map { $0 > cancelledAt } ?? false,
            """
            “release notes” should start after “checksum” was cancelled (which releases it), and \
            \(startedAt == nil ? "it never ran its work" : "it started before that").
            Timeline: \(recorder.timeline)
            \(hint)
            """
        )
        #expect(
            received.value == ["changelog": "changelog output"] && !notes.isCancelled,
            """
            “release notes” (policy .runWithout) should run with only [“changelog”] as input; \
            it received \(describe(received.value))\(notes.isCancelled ? " and was cancelled" : "").
            “checksum” was cancelled before it ran and “signature” while it ran: whatever a cancelled \
            dependency left is absent, not final.
            \(hint)
            """
        )
    }
}
