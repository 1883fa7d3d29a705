import Chapter11
import Foundation
import KataTestSupport
import Testing

/// Tries two engines side by side in a process of their own before the specs here make engines.
///
/// Every spec in this process hands each engine a queue of its own (`queueOfItsOwn()`). An engine
/// that ignores the queue it was given and keeps one queue for every engine (a `static`) lets one
/// spec's `open(_:)` set the underlying queue of a queue that holds another spec's jobs, which
/// stops the program (swift-corelibs-foundation) and every verdict of the run with it. Tried
/// first, it costs only the specs that make engines here; the specs that run their engines in
/// exit tests still say what is wrong.
enum EnginesTrial {
    static let name = "syncEnginesSideBySide"

    /// Whether two engines, each opened while the other had jobs, survived; records an issue
    /// that says how if not.
    static func survives(sourceLocation: SourceLocation) async -> Bool {
        await TrialRuns.survives(
            name, what: "opening a second engine while the first had jobs stopped the process or hung it",
            see: lesson.see("Running on a queue you own"), sourceLocation: sourceLocation
        ) {
            LastWords.forget(name)
            let result = await #expect(
                processExitsWith: .success,
                """
                Expected two engines, each made with a queue of its own, to work side by side. Tried \
                in a process of its own, opening the second engine while the first one's jobs waited \
                in its queue stopped the process (a signal) or hung it (exit code 3). Most often both \
                engines used one queue, a `static` made once, instead of the queue each was given: \
                `open(_:)` then sets the underlying queue of a queue that holds another engine's jobs, \
                and Foundation stops the program. Each engine keeps to the queue it was given.
                \(lesson.see("Running on a queue you own"))
                """,
                sourceLocation: sourceLocation
            ) {
                await EnginesTrial.run()
            }
            LastWords.explain(name, result, sourceLocation: sourceLocation)
            return result != nil
        }
    }

    /// Opens a second engine while the first one's jobs wait in its queue; 3 if it hangs.
    static func run() async {
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let busy = Desk()
        busy.hold()
        let first = SyncEngine(queue: queueOfItsOwn())
        first.open(busy)
        let done = Protected(false)
        first.upload(notes("a", "b")) { done.withValue { $0 = true } }
        LastWords.note(
            name,
            """
            a second engine, made with a queue of its own, was opened while the first engine's jobs \
            waited in its queue, and open(_:) never returned.
            """)
        let second = SyncEngine(queue: queueOfItsOwn())
        second.open(Desk())
        LastWords.note(
            name, "both engines were open, and the process stopped once the first engine's store was let go.")
        busy.release()
        _ = await comesTrue(within: patience) { done.value }
        withExtendedLifetime((first, second)) {}
    }
}

/// Runs a spec that makes engines in this process only once two engines survived side by side in
/// a trial process: `@Suite("…", .watched, .enginesTried)`.
///
/// When the trial trapped or hung, the spec records the trial's issue instead of running.
struct EnginesTrialTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard await EnginesTrial.survives(sourceLocation: test.sourceLocation) else { return }
        try await function()
    }
}

extension Trait where Self == EnginesTrialTrait {
    /// Runs the suite's specs only if two engines survived side by side in a trial process.
    static var enginesTried: Self { Self() }
}
