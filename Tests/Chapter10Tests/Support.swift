import Chapter10
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 10)

/// How long a scenario waits for what correct code does within milliseconds.
let patience = Bound.scaled(.milliseconds(500))

/// A renderer that answers at once (or once `holding` opens: for every image, or for those in
/// `held` when given), fails the images it is told to, and counts its renders.
final class Studio: Renderer {
    private let failing: Set<String>
    private let holding: Gate?
    private let held: Set<String>?
    /// Every render that began, by image name, in order.
    let renders = Recorder<String>()

    init(failing: Set<String> = [], holding: Gate? = nil, only held: Set<String>? = nil) {
        self.failing = failing
        self.holding = holding
        self.held = held
    }

    func render(_ name: String) throws -> Int {
        renders.record(name)
        if held?.contains(name) ?? true { _ = holding?.wait(timeout: patience * 4) }
        if failing.contains(name) { throw ExportError.unreadable(name) }
        return Self.size(of: name)
    }

    /// The size the studio gives the file of `name`.
    static func size(of name: String) -> Int {
        1000 + name.utf8.reduce(0) { $0 + Int($1) }
    }
}

/// An executor with one thread of its own, as an app's screen might have.
///
/// A task that prefers it runs its nonisolated async code there; while that code blocks, no
/// other task that prefers it can run.
final class OneThread: TaskExecutor, @unchecked Sendable {  // `jobs` is only touched under `condition`
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // protected by condition

    init() {
        Thread.detachNewThread { [self] in
            while true {
                let job = condition.withLock {
                    while jobs.isEmpty { condition.wait() }
                    return jobs.removeFirst()
                }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Whether another job gets to run on the thread within `bound`.
    func isFree(within bound: Duration) async -> Bool {
        let ran = Protected(false)
        Task(executorPreference: self) { ran.withValue { $0 = true } }
        return await comesTrue(within: bound) { ran.value }
    }
}

/// One call of `export(_:)`, running in a task of its own; the spec never awaits it unbounded.
final class Call: Sendable {
    let name: String
    private let outcome = Protected<Result<Export, any Error>?>(nil)
    private let task = Protected<Task<Void, Never>?>(nil)

    /// Starts exporting `name` with `exporter`, on `executor` and at `priority` when given.
    init(
        _ exporter: Exporter, _ name: String, on executor: OneThread? = nil, priority: TaskPriority? = nil,
        cancelledFirst: Bool = false
    ) {
        self.name = name
        let outcome = self.outcome
        let task = Task(executorPreference: executor, priority: priority) {
            if cancelledFirst { withUnsafeCurrentTask { $0?.cancel() } }
            let result = await Result { try await exporter.export(name) }
            outcome.withValue { $0 = result }
        }
        self.task.withValue { $0 = task }
    }

    /// What `export(_:)` returned or threw, once it has.
    var result: Result<Export, any Error>? { outcome.value }

    /// Whether `export(_:)` has returned or thrown.
    var isOver: Bool { outcome.value != nil }

    /// Cancels the awaiting task.
    func cancel() { task.value?.cancel() }

    /// The outcome in words, for messages.
    var described: String {
        switch outcome.value {
        case nil: "export(\"\(name)\") had not returned"
        case .success(let export)?: "export(\"\(name)\") returned \(export)"
        case .failure(let error)?: "export(\"\(name)\") threw \(error)"
        }
    }
}

extension Result where Failure == any Error {
    /// The result of an async throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
