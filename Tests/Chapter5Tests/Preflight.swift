import Chapter5
import Foundation
import KataTestSupport
import Testing

/// Tries, in a process of its own, the paths on which a learner's plan or step may trap, before a
/// spec takes them here.
///
/// A cycle search that never marks what it has already seen calls itself without end once it
/// meets a loop that does not come back to where it began, and overflows the stack; a step that
/// force-unwraps the output of an input that was cancelled traps. Either would stop every spec of
/// the run. A hang needs no trial: `attempt(_:)` bounds `start()`, and the specs wait on steps
/// with bounded waits.
enum Preflight {
    /// Whether starting every plan with a cycle survives; records an issue that says how if not.
    static func survivesCycles(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "buildPlanCycles", what: "starting a plan with a cycle crashed",
            see: lesson.see("Refuse cycles before you enqueue"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("buildPlanCycles")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected start() to throw BuildError.cycle for every plan with a loop in it. Tried in \
                a process of its own, start() crashed that process. A memory fault (signal 11) is \
                most often a stack overflow: a search that follows needs without remembering which \
                steps it has already finished goes round a loop for ever once it enters one from \
                outside, and only a loop that comes back to the step it began with stops it. Keep \
                the steps on the current path and the steps already searched apart.
                \(lesson.see("Refuse cycles before you enqueue"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.cyclesRun())
            }
            LastWords.explain("buildPlanCycles", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Whether steps whose inputs or approval were cancelled survive; records an issue if not.
    static func survivesCancelledInputs(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            "buildStepCancelledInputs", what: "a step with a cancelled input or approval crashed",
            see: lesson.see("When a dependency is cancelled"), sourceLocation: sourceLocation
        ) {
            LastWords.forget("buildStepCancelledInputs")
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected a step whose input was cancelled to run without it (policy .runWithout), \
                and one whose approval was denied to cancel. Tried in a process of its own, a step \
                crashed that process: most often main() force-unwraps the output of an input that \
                was cancelled before it ran and has none. A cancelled input left no output; skip it.
                \(lesson.see("When a dependency is cancelled"))
                """,
                sourceLocation: sourceLocation
            ) {
                exit(Preflight.cancelledInputsRun())
            }
            LastWords.explain("buildStepCancelledInputs", result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Starts every plan with a cycle at once, each on a thread of its own; 3 if the process hangs.
    static func cyclesRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        LastWords.note("buildPlanCycles", "start() was called for each plan with a cycle, and one of them crashed.")
        let returned = Protected(0)
        for example in CyclicShape.all {
            let build = Build(example.shape, recorder: Recorder())
            start(build.plan) { returned.withValue { $0 += 1 } }
        }
        // A start() that blocks is left to the spec, which bounds it itself.
        _ = settles(within: patienceForATrap) { returned.value == CyclicShape.all.count }
        return 0
    }

    /// Runs, with each policy and all at once, a step whose input is cancelled and one whose
    /// approval is denied; 3 if the process hangs.
    static func cancelledInputsRun() -> Int32 {
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        LastWords.note(
            "buildStepCancelledInputs",
            "with each policy, a step whose input “checksum” was cancelled before it ran, and a step "
                + "whose approval was denied, ran at the same time, and one of them crashed.")
        let ended = Protected(0)
        for policy in Policy.allCases {
            Thread.detachNewThread {
                runWithoutCancelledInput(policy)
                ended.withValue { $0 += 1 }
            }
            Thread.detachNewThread {
                runWithDeniedApproval(policy)
                ended.withValue { $0 += 1 }
            }
        }
        // A step or a start() that blocks is left to the specs, which bound their waits.
        _ = settles(within: patienceForATrap) { ended.value == 2 * Policy.allCases.count }
        return 0
    }

    /// Starts a plan whose step “notes” needs “checksum”, cancels “checksum” before it ran and
    /// waits for “notes” to finish.
    private static func runWithoutCancelledInput(_ policy: Policy) {
        let recorder = Recorder<Event>()
        let held = heldQueue("the network queue (suspended)", recorder: recorder)
        let queue = EagerQueue("queue A", recorder: recorder)
        let checksum = BuildStep("checksum", work: Build.work("checksum", recorder: recorder))
        let notes = BuildStep("notes", ifInputCancelled: policy.value, work: Build.work("notes", recorder: recorder))
        var plan = BuildPlan()
        plan.add(BuildStep("download", work: Build.work("download", recorder: recorder)), on: held)
        plan.add(checksum, needs: ["download"], on: queue)
        plan.add(BuildStep("changelog", work: Build.work("changelog", recorder: recorder)), on: queue)
        plan.add(notes, needs: ["checksum", "changelog"], on: queue)
        _ = try? plan.start()
        checksum.cancel()
        _ = settles(within: patienceForATrap) { notes.isFinished }
        held.isSuspended = false
    }

    /// Starts a plan whose step “publish” waits for an approval, denies it and waits for “publish”.
    private static func runWithDeniedApproval(_ policy: Policy) {
        let recorder = Recorder<Event>()
        let signOff = Approval("sign-off")
        let publish = BuildStep(
            "publish", ifInputCancelled: policy.value, approval: signOff,
            work: Build.work("publish", recorder: recorder))
        var plan = BuildPlan()
        plan.add(publish, on: EagerQueue("queue A", recorder: recorder))
        _ = try? plan.start()
        signOff.deny()
        _ = settles(within: patienceForATrap) { publish.isFinished }
    }

    /// How long a trial waits for a trap: correct code needs milliseconds, but on a busy machine
    /// the thread that traps may not run for a while.
    private static let patienceForATrap = Bound.scaled(.seconds(1))

    /// Calls `plan.start()` on a thread of its own, then `done`.
    private static func start(_ plan: BuildPlan, then done: @escaping @Sendable () -> Void) {
        struct Box: @unchecked Sendable {  // handed to exactly one thread, then only read there
            let plan: BuildPlan
        }
        let box = Box(plan: plan)
        Thread.detachNewThread {
            _ = try? box.plan.start()
            done()
        }
    }
}

/// Runs a spec only once the trial of the path it takes survived: `.preflightCycles` or
/// `.preflightCancelledInputs`.
///
/// When the trial crashed, the spec records the trial's issue instead of running.
struct PreflightTrait: TestTrait, TestScoping {
    enum Path: Sendable {
        case cycles, cancelledInputs
    }

    let path: Path

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let at = test.sourceLocation
        switch path {
        case .cycles: guard await Preflight.survivesCycles(sourceLocation: at) else { return }
        case .cancelledInputs: guard await Preflight.survivesCancelledInputs(sourceLocation: at) else { return }
        }
        try await function()
    }
}

extension Trait where Self == PreflightTrait {
    /// Runs the spec only if starting plans with cycles survives in a trial process.
    static var preflightCycles: Self { Self(path: .cycles) }

    /// Runs the spec only if steps with cancelled inputs and approvals survive in a trial process.
    static var preflightCancelledInputs: Self { Self(path: .cancelledInputs) }
}
