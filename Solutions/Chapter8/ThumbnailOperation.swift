import Foundation

/// An operation that makes one thumbnail with Swift async work, and finishes when that work ends.
///
/// `start()` launches the work in a `Task` and returns at once. When the work ends, the operation
/// publishes the thumbnail (or the error) and only then announces that it finished, so queues,
/// dependents and completion blocks wait for the async work, not for the `Task` to be created.
/// `cancel()` cancels the `Task`; the work notices, ends, and finishes the operation.
open class ThumbnailOperation: Operation, @unchecked Sendable {  // `phase` is only touched under `lock`
    /// Where the operation is in its life; each stage carries what only that stage has.
    private enum Phase {
        case waiting
        case working(Task<Void, Never>)
        case done(Result<Thumbnail, any Error>)

        var isWorking: Bool {
            if case .working = self { true } else { false }
        }

        var isDone: Bool {
            if case .done = self { true } else { false }
        }
    }

    /// The name of the picture to shrink.
    public let imageName: String
    /// The width of the thumbnail, in pixels.
    public let width: Int
    private let loader: any ThumbnailLoader
    /// Guards `phase`. Re-entrant, because on Linux announcing a change reads the property back here.
    private let lock = NSRecursiveLock()
    private var phase = Phase.waiting  // protected by lock

    /// Creates an operation that will fetch `imageName` with `loader` and shrink it to `width` pixels.
    public init(imageName: String, width: Int, loader: any ThumbnailLoader) {
        self.imageName = imageName
        self.width = width
        self.loader = loader
        super.init()
    }

    /// Always true: `start()` launches the work and returns before it is done.
    open override var isAsynchronous: Bool {
        true
    }

    /// Whether the work has been launched and has not ended yet.
    open override var isExecuting: Bool {
        lock.withLock { phase.isWorking }
    }

    /// Whether the operation is done: its work ended, or it was cancelled before it started.
    open override var isFinished: Bool {
        lock.withLock { phase.isDone }
    }

    /// The thumbnail, or the error that stopped the work; nil until the operation finished.
    public var result: Result<Thumbnail, any Error>? {
        lock.withLock {
            if case .done(let outcome) = phase { outcome } else { nil }
        }
    }

    /// Launches the work in a `Task` and returns at once, or finishes now if already cancelled.
    ///
    /// It never calls `super.start()`: the inherited bookkeeping is for work that ends when `main()` returns.
    open override func start() {
        lock.withLock {
            guard case .waiting = phase else { return }
            if isCancelled {
                return enter(.done(.failure(CancellationError())))
            }
            // A task made here runs at the default priority unless told otherwise.
            let work = Task(priority: TaskPriority(qualityOfService)) { [imageName, width, loader] in
                let outcome: Result<Thumbnail, any Error>
                do {
                    outcome = .success(try await Self.makeThumbnail(imageName, width, loader))
                } catch {
                    outcome = .failure(error)
                }
                self.finish(with: outcome)
            }
            // Made and stored in one critical section with the isCancelled check: a cancel()
            // either came before it (no task) or comes after it (and finds the task).
            enter(.working(work))
        }
    }

    /// Marks the operation cancelled and cancels its `Task`; the operation finishes when the work ends.
    open override func cancel() {
        super.cancel()
        let work: Task<Void, Never>? = lock.withLock {
            if case .working(let work) = phase { work } else { nil }
        }
        work?.cancel()
    }

    /// Publishes `outcome` and moves the operation to finished; only the first call has any effect.
    public func finish(with outcome: Result<Thumbnail, any Error>) {
        lock.withLock {
            if case .done = phase { return }
            enter(.done(outcome))
        }
    }

    /// Moves to `next`, announcing around the change each flag whose value it changes.
    ///
    /// Call it with `lock` held: the getters wait, so nobody reads a half-made change.
    private func enter(_ next: Phase) {
        var changing: [String] = []
        if phase.isWorking != next.isWorking { changing.append("isExecuting") }
        if phase.isDone != next.isDone { changing.append("isFinished") }
        changing.forEach(willChangeValue(forKey:))
        phase = next
        changing.forEach(didChangeValue(forKey:))
    }

    /// The async work itself: fetch, then shrink, stopping between the steps once cancelled.
    private static func makeThumbnail(
        _ name: String, _ width: Int, _ loader: any ThumbnailLoader
    ) async throws -> Thumbnail {
        try Task.checkCancellation()  // cancelled after start() but before the task began
        let picture = try await loader.fetch(name)
        try Task.checkCancellation()  // a step may return normally although the task was cancelled
        return try await loader.resize(picture, to: width)
    }
}

extension TaskPriority {
    /// The task priority that stands for an operation's quality of service.
    fileprivate init(_ service: QualityOfService) {
        switch service {
        case .userInteractive, .userInitiated: self = .high
        case .utility: self = .utility
        case .background: self = .background
        default: self = .medium
        }
    }
}
