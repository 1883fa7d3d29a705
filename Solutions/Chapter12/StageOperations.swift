import Foundation

/// An operation that downloads one image with the async fetcher, and finishes when the download ends.
///
/// `start()` launches the download in a `Task` and returns; the operation stays executing, and
/// keeps its slot in the fetch queue, until the download has ended. `cancel()` cancels the task.
final class FetchOperation: Operation, @unchecked Sendable {  // `phase` is only touched under `lock`
    private enum Phase {
        case waiting
        case working(Task<Void, Never>)
        case done(Result<Data, any Error>)

        var isWorking: Bool {
            if case .working = self { true } else { false }
        }

        var isDone: Bool {
            if case .done = self { true } else { false }
        }
    }

    private let url: URL
    private let fetcher: any ImageFetcher
    /// Guards `phase`. Re-entrant, because on Linux announcing a change reads the flag back here.
    private let lock = NSRecursiveLock()
    private var phase = Phase.waiting  // protected by lock

    init(url: URL, fetcher: any ImageFetcher) {
        self.url = url
        self.fetcher = fetcher
        super.init()
    }

    override var isAsynchronous: Bool { true }

    override var isExecuting: Bool {
        lock.withLock { phase.isWorking }
    }

    override var isFinished: Bool {
        lock.withLock { phase.isDone }
    }

    /// Whether a queue has not started the operation yet.
    var isWaiting: Bool {
        lock.withLock {
            if case .waiting = phase { true } else { false }
        }
    }

    /// The downloaded bytes or the error; nil until the operation has finished.
    var result: Result<Data, any Error>? {
        lock.withLock {
            if case .done(let result) = phase { result } else { nil }
        }
    }

    override func start() {
        lock.withLock {
            guard case .waiting = phase else { return }
            guard !isCancelled else { return enter(.done(.failure(CancellationError()))) }
            let download = Task { [url, fetcher] in
                let result = await Result { try await fetcher.fetch(url) }
                self.finish(with: result)
            }
            // Stored in the same critical section as the check: a cancel() either came before
            // it, or comes after it and finds the task.
            enter(.working(download))
        }
    }

    override func cancel() {
        super.cancel()
        let download: Task<Void, Never>? = lock.withLock {
            if case .working(let download) = phase { download } else { nil }
        }
        download?.cancel()
    }

    private func finish(with result: Result<Data, any Error>) {
        lock.withLock {
            guard phase.isWorking else { return }
            enter(.done(result))
        }
    }

    /// Moves to `next`, announcing each flag that changes; call it with `lock` held.
    private func enter(_ next: Phase) {
        var changing: [String] = []
        if phase.isWorking != next.isWorking { changing.append("isExecuting") }
        if phase.isDone != next.isDone { changing.append("isFinished") }
        changing.forEach(willChangeValue(forKey:))
        phase = next
        changing.forEach(didChangeValue(forKey:))
    }
}

/// An operation that runs one blocking stage (a decode or a resize) and keeps its outcome.
final class StageOperation: Operation, @unchecked Sendable {  // `work` and `outcome` are only touched under `lock`
    /// Which stage the operation runs.
    enum Kind: Sendable {
        case decode, resize
    }

    let kind: Kind
    private let lock = NSLock()
    /// The stage's work, which holds its input; dropped once it has run, so the input can go.
    private var work: (@Sendable () throws -> Bitmap)?  // protected by lock
    private var outcome: Result<Bitmap, any Error>?  // protected by lock

    init(_ kind: Kind, _ work: @escaping @Sendable () throws -> Bitmap) {
        self.kind = kind
        self.work = work
        super.init()
    }

    /// The work, if the operation has not begun it: taken away, so that the operation, when its
    /// queue starts it, runs nothing and leaves no result. Nil once it has begun.
    func takeWorkIfNotStarted() -> (@Sendable () throws -> Bitmap)? {
        lock.withLock { work.take() }
    }

    /// The bitmap the stage made or its error; nil until it ran, and for good if cancelled first.
    var result: Result<Bitmap, any Error>? {
        lock.withLock { outcome }
    }

    override func main() {
        let work = lock.withLock { self.work.take() }
        guard !isCancelled, let work else { return }
        let result = Result { try work() }
        lock.withLock { outcome = result }
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
