import Chapter8
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages send the learner.
let lesson = Lesson(chapter: 8)

/// The width every spec asks for.
let thumbnailWidth = 64

/// An error the scripted loader throws when a spec tells it to.
enum LoaderError: Error, Equatable {
    case missing(String)
}

/// A loader whose every await waits until the spec settles it, so the spec decides when work resumes.
///
/// Each step is named like `fetch a` or `resize a`. A waiting step holds no thread: it is a
/// suspended continuation. It sees task cancellation at once and throws `CancellationError`,
/// unless the spec made it deaf to cancellation, like an API that finishes what it started.
/// Everything it does goes to `trace`, a timeline such as
/// `start returned (a) → fetch a began → fetch a ended → resize a began → …`.
final class ScriptedLoader: ThumbnailLoader, @unchecked Sendable {  // `steps` is Protected; `trace` is a Recorder
    private struct Step {
        var continuation: CheckedContinuation<Void, any Error>?
        var verdict: Result<Void, any Error>?
        var ignoresCancellation = false
        var priority: TaskPriority?
    }

    let trace = Recorder<String>()
    private let steps = Protected<(byName: [String: Step], releasedAll: Bool)>(([:], false))

    func fetch(_ name: String) async throws -> Picture {
        try await pause("fetch \(name)")
        return Picture(name: name, width: 1024)
    }

    func resize(_ picture: Picture, to width: Int) async throws -> Thumbnail {
        try await pause("resize \(picture.name)")
        return Thumbnail(name: picture.name, width: width)
    }

    /// Whether the step `name` is suspended, waiting for the spec.
    func isWaiting(_ name: String) -> Bool {
        steps.withValue { $0.byName[name]?.continuation != nil }
    }

    /// The priority of the task that ran the step `name`, once it began.
    func priority(of name: String) -> TaskPriority? {
        steps.withValue { $0.byName[name]?.priority }
    }

    /// Lets the step `name` return normally, now or as soon as it begins.
    func resume(_ name: String) {
        settle(name, .success(()))
    }

    /// Makes the step `name` throw `error`, now or as soon as it begins.
    func fail(_ name: String, with error: any Error) {
        settle(name, .failure(error))
    }

    /// Makes the step `name` go on waiting when its task is cancelled, until the spec settles it.
    func ignoreCancellation(of name: String) {
        steps.withValue { $0.byName[name, default: Step()].ignoresCancellation = true }
    }

    /// Lets every step, waiting or future, return normally; specs call it when they end.
    func releaseAll() {
        let waiting = steps.withValue { state -> [CheckedContinuation<Void, any Error>] in
            state.releasedAll = true
            let waiting = state.byName.values.compactMap(\.continuation)
            for name in state.byName.keys { state.byName[name]?.continuation = nil }
            return waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Ends a spec: lets every step return, keeping `objects` alive until then.
    ///
    /// Freeing a cancelled dependent while its dependency still runs can crash Foundation on
    /// Linux, so a spec's queue and operations live until the spec is over.
    func endSpec(keepingAlive objects: AnyObject...) {
        releaseAll()
        withExtendedLifetime(objects) {}
    }

    private func pause(_ name: String) async throws {
        trace.record("\(name) began")
        if Probe.makingOperation { trace.record("\(name) ran in a Task made while the operation was created") }
        let priority = Task.currentPriority
        steps.withValue { $0.byName[name, default: Step()].priority = priority }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = steps.withValue { state -> Result<Void, any Error>? in
                    if state.releasedAll { return .success(()) }
                    if let verdict = state.byName[name]?.verdict { return verdict }
                    state.byName[name, default: Step()].continuation = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            if self.steps.withValue({ $0.byName[name]?.ignoresCancellation ?? false }) {
                self.trace.record("\(name) ignored the cancellation")
            } else {
                self.trace.record("\(name) saw cancellation")
                self.settle(name, .failure(CancellationError()))
            }
        }
        trace.record("\(name) ended")
    }

    private func settle(_ name: String, _ verdict: Result<Void, any Error>) {
        let waiting = steps.withValue { state -> CheckedContinuation<Void, any Error>? in
            guard state.byName[name]?.verdict == nil else { return nil }
            state.byName[name, default: Step()].verdict = verdict
            defer { state.byName[name]?.continuation = nil }
            return state.byName[name]?.continuation
        }
        waiting?.resume(with: verdict)
    }
}

/// Task-local marks that let the loader tell where the task running a step came from.
enum Probe {
    /// True inside `Probe.$makingOperation.withValue(true) { … }`, and in every Task made there.
    @TaskLocal static var makingOperation = false
}

/// Makes an operation the way a user does, marking the moment so that a Task made now is recognised.
func makeThumbnail(_ name: String, _ loader: ScriptedLoader) -> TracedThumbnail {
    Probe.$makingOperation.withValue(true) { TracedThumbnail(name, loader: loader) }
}

/// A thumbnail operation that notes when `start()` returned and checks every read of `isFinished`
/// and `isExecuting`.
///
/// Each read that sees `isFinished` true also reads `result` and `isExecuting` right after it, so
/// a finished operation without a result, or one still executing, is caught by whoever looked:
/// the queue, a dependent or the spec. Each read that sees `isExecuting` false once the operation
/// was executing reads `isFinished` after it, so one caught between the two flags is caught too.
/// On Linux, announcing a flag reads it back at once.
final class TracedThumbnail: ThumbnailOperation, @unchecked Sendable {  // immutable fields; the rest is Protected
    private struct Reads {
        var clock = 0
        var firstTrueEnded: Int?
        var withoutResult = 0
        var whileExecuting = 0
        var falseAfterTrue = 0
        var sawExecuting = false
        var neither = 0
    }

    let trace: Recorder<String>
    private let reads = Protected(Reads())
    /// Lets a second finish in between the first one's check of the state and its change.
    let raceWindow = RaceWindow()
    /// Lets a cancel() in at the moment start() reads the operation's quality of service to launch the Task.
    let launchWindow = RaceWindow()
    private let firstOutcome = Protected<String?>(nil)

    /// The result the first read that saw isFinished true found, described; nil before that read.
    var outcomeWhenFirstFinished: String? { firstOutcome.value }

    init(_ name: String, loader: ScriptedLoader) {
        trace = loader.trace
        super.init(imageName: name, width: thumbnailWidth, loader: loader)
    }

    override func start() {
        super.start()
        trace.record("start returned (\(imageName))")
    }

    override var isFinished: Bool {
        let began = reads.withValue {
            $0.clock += 1
            return $0.clock
        }
        let finished = super.isFinished
        if !finished { raceWindow.checked() }
        let stillExecuting = finished && isExecuting
        let outcome = finished ? result : nil
        let missingResult = finished && outcome == nil
        if finished { firstOutcome.withValue { $0 = $0 ?? describe(outcome) } }
        reads.withValue {
            $0.clock += 1
            if finished {
                $0.firstTrueEnded = $0.firstTrueEnded ?? $0.clock
            } else if let ended = $0.firstTrueEnded, began > ended {
                $0.falseAfterTrue += 1  // this read began after an earlier one had seen true
            }
            if missingResult { $0.withoutResult += 1 }
            if stillExecuting { $0.whileExecuting += 1 }
        }
        return finished
    }

    override var qualityOfService: QualityOfService {
        get {
            let service = super.qualityOfService
            launchWindow.checked()
            return service
        }
        set { super.qualityOfService = newValue }
    }

    override var isExecuting: Bool {
        let executing = super.isExecuting
        if executing {
            raceWindow.checked()
            reads.withValue { $0.sawExecuting = true }
        } else if reads.value.sawExecuting, !super.isFinished {
            // Once it was executing, the only way on is to finished, both flags in one move.
            reads.withValue { $0.neither += 1 }
        }
        return executing
    }

    /// Problems that reads of isFinished saw, one line each; empty when every read was consistent.
    var inconsistentReads: [String] {
        let seen = reads.value
        var problems: [String] = []
        if seen.withoutResult > 0 {
            problems.append("\(seen.withoutResult) read(s) saw isFinished true while result was still nil")
        }
        if seen.whileExecuting > 0 {
            problems.append("\(seen.whileExecuting) read(s) saw isFinished true while isExecuting was still true")
        }
        if seen.neither > 0 {
            problems.append(
                "\(seen.neither) read(s) saw isExecuting false while isFinished was still false, after the "
                    + "operation had been executing: neither running nor done")
        }
        if seen.falseAfterTrue > 0 {
            problems.append("\(seen.falseAfterTrue) read(s) saw isFinished false after it had read true")
        }
        return problems
    }
}

#if canImport(Darwin)
    /// Counts the will and did notifications an operation sends for `isExecuting` and `isFinished`.
    ///
    /// Darwin only: on Linux an operation takes no observers, so specs there judge the effects.
    final class Announcements: NSObject, @unchecked Sendable {  // `counts` is Protected; `operation` is immutable
        private static let keys = ["isExecuting", "isFinished"]
        private let counts = Protected<[String: Int]>([:])
        private let operation: Operation

        /// Starts counting the notifications `operation` sends.
        init(of operation: Operation) {
            self.operation = operation
            super.init()
            for key in Self.keys {
                operation.addObserver(self, forKeyPath: key, options: [.prior], context: nil)
            }
        }

        /// Stops counting; call it before the spec ends.
        func stop() {
            for key in Self.keys {
                operation.removeObserver(self, forKeyPath: key)
            }
        }

        /// How many `will` and `did` notifications arrived for `key`.
        func count(_ key: String) -> (will: Int, did: Int) {
            let seen = counts.value
            return (seen["will \(key)"] ?? 0, seen["did \(key)"] ?? 0)
        }

        override func observeValue(
            forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?,
            context: UnsafeMutableRawPointer?
        ) {
            let isPrior = change?[.notificationIsPriorKey] as? Bool ?? false
            counts.withValue { $0["\(isPrior ? "will" : "did") \(keyPath ?? "?")", default: 0] += 1 }
        }
    }
#endif

/// A block operation that depends on `operation` and records `event` when it runs, noting a missing result.
func sentinel(after operation: TracedThumbnail, records event: String = "sentinel ran") -> BlockOperation {
    let trace = operation.trace
    let dependent = BlockOperation { [unowned operation] in
        trace.record(operation.result == nil ? "\(event) (no result yet)" : event)
    }
    dependent.addDependency(operation)
    return dependent
}

/// Waits until the queue called `start()` on `operation` and it returned, with its fetch waiting.
@discardableResult
func waitForLaunch(
    _ operation: TracedThumbnail,
    _ loader: ScriptedLoader,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    let name = operation.imageName
    return await waitUntil(
        "start() of \(name) to return with the fetch of \(name) waiting",
        hint: loader.trace.lifecycle(missing: "start never returned or the fetch never began") + "\n"
            + lesson.see("Start launches a Task and returns"),
        sourceLocation: sourceLocation,
        { loader.trace.contains("start returned (\(name))") && loader.isWaiting("fetch \(name)") })
}

/// Lets the fetch and then the resize of `name` complete, waiting for the resize to begin in between.
@discardableResult
func letWorkEnd(
    _ name: String,
    _ loader: ScriptedLoader,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    loader.resume("fetch \(name)")
    guard
        await waitUntil(
            "the resize of \(name) to begin after its fetch returned",
            hint: loader.trace.lifecycle(missing: "resize never began") + "\n" + lesson.see("Steps"),
            sourceLocation: sourceLocation, { loader.isWaiting("resize \(name)") })
    else { return false }
    loader.resume("resize \(name)")
    return true
}

/// A description of a result for failure messages.
func describe(_ result: Result<Thumbnail, any Error>?) -> String {
    switch result {
    case nil: "nil"
    case .success(let thumbnail)?: "success(\(thumbnail.name), \(thumbnail.width) px)"
    case .failure(let error)?: "failure(\(error))"
    }
}
