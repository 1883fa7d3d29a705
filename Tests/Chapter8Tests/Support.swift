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
/// suspended continuation. It sees task cancellation at once and throws `CancellationError`.
/// Everything it does goes to `trace`, a timeline such as
/// `start returned (a) → fetch a began → fetch a ended → resize a began → …`.
final class ScriptedLoader: ThumbnailLoader, @unchecked Sendable {  // `steps` is Protected; `trace` is a Recorder
    private struct Step {
        var continuation: CheckedContinuation<Void, any Error>?
        var verdict: Result<Void, any Error>?
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

    /// Lets the step `name` return normally, now or as soon as it begins.
    func resume(_ name: String) {
        settle(name, .success(()))
    }

    /// Makes the step `name` throw `error`, now or as soon as it begins.
    func fail(_ name: String, with error: any Error) {
        settle(name, .failure(error))
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
            self.trace.record("\(name) saw cancellation")
            self.settle(name, .failure(CancellationError()))
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

/// Whether the current task is inside a spec's probe (see `TracedThumbnail.readsDuringProbe`).
enum Probe {
    @TaskLocal static var isActive = false
}

/// A thumbnail operation that notes when `start()` returned and checks every read of `isFinished`.
final class TracedThumbnail: ThumbnailOperation, @unchecked Sendable {  // immutable fields; the rest is Protected
    let trace: Recorder<String>
    private let finishedReads = Protected((withoutResult: 0, duringProbe: 0))

    init(_ name: String, loader: ScriptedLoader) {
        trace = loader.trace
        super.init(imageName: name, width: thumbnailWidth, loader: loader)
    }

    override func start() {
        super.start()
        trace.record("start returned (\(imageName))")
    }

    /// Announcing a change of isFinished reads the property back, so this sees every announcement on Linux.
    override var isFinished: Bool {
        let finished = super.isFinished
        let missingResult = finished && result == nil
        let probing = Probe.isActive
        finishedReads.withValue {
            if missingResult { $0.withoutResult += 1 }
            if probing { $0.duringProbe += 1 }
        }
        return finished
    }

    /// How many times isFinished read true while `result` was still nil.
    var finishedWithoutResult: Int { finishedReads.value.withoutResult }

    /// How many times isFinished was read inside `Probe.$isActive.withValue(true) { … }`.
    var readsDuringProbe: Int { finishedReads.value.duringProbe }
}



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
            hint: loader.trace.lifecycle(missing: "resize never began") + "\n" + lesson.see("The steps"),
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
