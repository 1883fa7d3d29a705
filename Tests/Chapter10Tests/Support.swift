import Chapter10
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 10)

/// How long a scenario waits for what correct code does within milliseconds.
let patience = Bound.scaled(.milliseconds(500))

/// A renderer that answers at once, fails the images it is told to, and counts its renders.
final class Studio: Renderer {
    private let failing: Set<String>
    /// Every render that began, by image name, in order.
    let renders = Recorder<String>()

    init(failing: Set<String> = []) {
        self.failing = failing
    }

    func render(_ name: String) throws -> Int {
        renders.record(name)
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

    /// Starts exporting `name` with `exporter`, on `executor` when one is given.
    init(_ exporter: Exporter, _ name: String, on executor: OneThread? = nil, cancelledFirst: Bool = false) {
        self.name = name
        let outcome = self.outcome
        let task = Task(executorPreference: executor) {
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

/// Where the child process of scenario `name` leaves its last words for the spec that ran it.
///
/// An exit test that fails returns nothing to the spec, not even the child's output, so the
/// child writes what it saw to a file named after the parent process and the scenario.
func wordsFile(_ name: String, parent: Int32) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("kata-chapter10-\(parent)-\(name).txt")
}

/// Ends scenario `name`'s child process with a failure, saying what the scenario saw.
func fail(_ name: String, _ message: String) -> Never {
    try? Data(message.utf8).write(to: wordsFile(name, parent: getppid()))
    exit(EXIT_FAILURE)
}

/// Records what scenario `name`'s child process saw before it failed, if it left words.
func explain(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let file = wordsFile(name, parent: getpid())
    guard let words = try? String(contentsOf: file, encoding: .utf8) else { return }
    try? FileManager.default.removeItem(at: file)
    Issue.record(Comment(rawValue: "What happened: " + words), sourceLocation: sourceLocation)
}

/// Forgets words left by an earlier run of scenario `name`.
func forget(_ name: String) {
    try? FileManager.default.removeItem(at: wordsFile(name, parent: getpid()))
}

extension Duration {
    /// The duration in seconds, for messages.
    var seconds: String {
        String(format: "%g", timeInterval)
    }
}
