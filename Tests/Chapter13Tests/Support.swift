import Chapter13
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 13)

/// How long a spec waits for what correct code does within milliseconds.
let patience = Bound.scaled(.milliseconds(500))

/// How long a spec watches for something that correct code never does.
let window = Bound.scaled(.milliseconds(60))

/// The error the card throws for a photo it is told to fail.
struct UnreadablePhoto: Error, Equatable, CustomStringConvertible {
    let name: String
    var description: String { "\(name) cannot be read" }
}

/// A camera card for the specs: records each copy, holds the photos it is told to hold until the
/// spec releases them, and fails the ones it is told to fail.
///
/// A held copy suspends without a thread. It ends early when its task is cancelled, unless the
/// photo is `stubborn`: then it finishes only when released, as a copy that has gone too far to
/// stop does, and notes whether it saw the cancellation. Every hold ends when the spec releases
/// everything, which each spec does on its way out. A spec can also act as a copy begins
/// (`whenBegun`) and in the middle of a cancel (`whenCancelled`).
final class Card: PhotoCard, @unchecked Sendable {  // `state` only under `lock`
    private struct State {
        var running: [String] = []
        var peak = 0
        var priorities: [String: TaskPriority] = [:]
        var failing: [String: @Sendable () -> any Error] = [:]
    }

    private let lock = NSLock()
    private var state = State()  // protected by lock
    private let holding: Set<String>
    private let stubborn: Set<String>
    private let holds = Holds()
    /// A weak reference to each `CancellationError` a copy threw, for a spec that looks at
    /// whether anything still keeps it once the import has ended.
    private let cancellations = Protected<[WeakReference<AnyObject>]>([])
    /// What happened, in order: `a began`, `a copied`, `a cancelled`, `a saw the cancellation`…
    let events = Recorder<String>()
    /// Called with the photo's name when the task of a held copy is cancelled, on the thread that
    /// cancels it and before that `cancel()` goes on to anything else; the copy's own task waits
    /// until it returns. A spec sets it to act in the middle of a cancel.
    let whenCancelled = Protected<(@Sendable (String) -> Void)?>(nil)
    /// Called with the photo's name as each copy begins, on the copy's own task.
    let whenBegun = Protected<(@Sendable (String) -> Void)?>(nil)
    /// Called with the photo's name as a copy is about to return its photo, on the copy's own
    /// task: what the importer does once the copy has ended waits until it returns.
    let whenEnding = Protected<(@Sendable (String) -> Void)?>(nil)
    /// How many times each copy suspends on its way, as a card that reads in steps does.
    private let steps: Int

    init(holding: Set<String> = [], stubborn: Set<String> = [], steps: Int = 0) {
        self.holding = holding.union(stubborn)
        self.stubborn = stubborn
        self.steps = steps
    }

    func copy(_ name: String) async throws -> Photo {
        lock.withLock {
            state.running.append(name)
            state.peak = max(state.peak, state.running.count)
            state.priorities[name] = Task.currentPriority
            events.record("\(name) began")
        }
        defer { lock.withLock { state.running.removeAll { $0 == name } } }
        whenBegun.value?(name)
        for _ in 0..<steps { await Task.yield() }
        do {
            if holding.contains(name) {
                try await withTaskCancellationHandler {
                    try await holds.wait(for: name, ignoringCancellation: stubborn.contains(name))
                } onCancel: { [whenCancelled] in
                    whenCancelled.value?(name)
                }
            }
            if stubborn.contains(name), Task.isCancelled { events.record("\(name) saw the cancellation") }
            if let error = lock.withLock({ state.failing[name] }) { throw error() }
            if !stubborn.contains(name) { try Task.checkCancellation() }
        } catch {
            events.record("\(name) \(error is CancellationError ? "cancelled" : "failed")")
            if error is CancellationError {
                // An error travels in a box, one object from the throw to whoever catches it last.
                let box = WeakReference(unsafeBitCast(error as any Error, to: AnyObject.self))
                cancellations.withValue { $0.append(box) }
            }
            throw error
        }
        events.record("\(name) copied")
        whenEnding.value?(name)
        return Photo(name: name)
    }

    // MARK: What the spec controls and sees

    /// Lets the copy of `name` finish, now or as soon as it begins.
    func release(_ name: String) {
        holds.release(name)
    }

    /// Lets the copy of `name` end, now or as soon as it begins, with the card's error.
    func fail(_ name: String) {
        fail(name) { UnreadablePhoto(name: name) }
    }

    /// Lets the copy of `name` end, now or as soon as it begins, with an error `error` makes;
    /// the card keeps nothing of what it threw.
    func fail(_ name: String, with error: @escaping @Sendable () -> any Error) {
        lock.withLock { state.failing[name] = error }
        holds.release(name)
    }

    /// Lets every held copy finish, now and from now on.
    func releaseAll() {
        holds.releaseAll()
    }

    /// The photos being copied now.
    var running: [String] { lock.withLock { state.running } }

    /// The most copies that were ever under way at once.
    var peak: Int { lock.withLock { state.peak } }

    /// The photos whose copy began, in order.
    var began: [String] {
        events.all.filter { $0.hasSuffix(" began") }.map { String($0.dropLast(" began".count)) }
    }

    /// The priority each copy ran at, by photo.
    var priorities: [String: TaskPriority] { lock.withLock { state.priorities } }

    /// How many of the `CancellationError`s the copies threw something still keeps.
    var cancellationsKept: Int { cancellations.value.filter { $0.value != nil }.count }

    /// Whether `event` (`a copied`) was recorded.
    func saw(_ event: String) -> Bool { events.contains(event) }
}

/// One import under way, run in a task of its own, with what it reported and how it ended.
final class RunningImport: Sendable {
    /// Each progress report, in order: `1 of 3`, and whether it came on the main actor.
    let progress = Recorder<String>()
    private let outcome = Protected<Result<[Photo], any Error>?>(nil)
    let task: Task<Void, Never>

    /// Starts importing `names` with `importer`, in a task of priority `priority`; with
    /// `cancelledFirst`, that task is cancelled before it asks for the import.
    init(_ importer: Importer, _ names: [String], priority: TaskPriority = .utility, cancelledFirst: Bool = false) {
        let progress = progress
        let outcome = outcome
        task = Task(priority: priority) {
            if cancelledFirst { withUnsafeCurrentTask { $0?.cancel() } }
            let result = await Result {
                try await importer.importAll(names) { copied, total in
                    progress.record("\(copied) of \(total)\(MainQueue.isCurrent ? "" : " (off the main actor)")")
                }
            }
            outcome.withValue { $0 = result }
        }
    }

    /// How the import ended; nil while it is under way. The spec never awaits the task, so that
    /// its own priority never raises the import's.
    var result: Result<[Photo], any Error>? { outcome.value }

    /// The outcome in words: `returned a, b`, `threw CancellationError`, or `still running`.
    var ending: String {
        switch result {
        case .success(let photos)?: "returned \(photos.map(\.name).joined(separator: ", "))"
        case .failure(let error)?: "threw \(error is CancellationError ? "CancellationError" : "“\(error)”")"
        case nil: "was still running"
        }
    }

    /// Whether the import threw `CancellationError`.
    var threwCancellation: Bool {
        if case .failure(let error)? = result { error is CancellationError } else { false }
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// A reason to stop waiting once more than `width` copies run at once: the wait that follows
/// counts on the width, and the width spec says what went wrong.
func beyond(_ width: Int, on card: Card) -> () -> String? {
    {
        card.peak > width
            ? "\(card.peak) copies ran at once with a width of \(width) (\(card.began.joined(separator: ", ")) began), so this spec cannot go on; see “no more copies run at once than the width”"
            : nil
    }
}

/// The object that stores an array's elements, for a spec that watches, through a weak
/// reference, whether anything but the spec still keeps an import's photos.
///
/// An array is one reference to its storage; copies of it share that storage until one of them
/// changes, so the photos an import returned are stored where its task keeps its result.
func storage(of photos: [Photo]) -> AnyObject {
    precondition(!photos.isEmpty, "an empty array has no storage of its own")
    return unsafeBitCast(photos, to: AnyObject.self)
}

/// Keeps all but one of the cooperative pool's threads waiting, so that the jobs made runnable
/// meanwhile run one at a time, in the order they became runnable.
///
/// Used in exit tests only: a process of the spec's own, whose pool nothing else needs. Each
/// waiting thread gives up on its own after `limit`, so a spec that never calls `release()`
/// holds nothing for long.
final class PoolHold: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let holding = Protected(0)
    private let count = max(0, ProcessInfo.processInfo.activeProcessorCount - 1)

    /// Starts holding; returns once every thread it takes is waiting, or after `limit`.
    init(limit: Duration = Bound.standard) async {
        for _ in 0..<count {
            Task.detached { [released, holding] in
                holding.withValue { $0 += 1 }
                Self.wait(on: released, for: limit)
            }
        }
        _ = await comesTrue(within: limit) { holding.value == count }
    }

    /// Lets every held thread go.
    func release() {
        for _ in 0..<count { released.signal() }
    }

    private static func wait(on semaphore: DispatchSemaphore, for limit: Duration) {
        _ = semaphore.wait(timeout: .now() + .nanoseconds(Int(limit / .nanoseconds(1))))
    }
}
