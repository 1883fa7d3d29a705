import Foundation

/// An operation that makes one thumbnail with Swift async work, and finishes when that work ends.
///
/// `start()` launches the work in a `Task` and returns at once. When the work ends, the operation
/// publishes the thumbnail (or the error) and only then announces that it finished, so queues,
/// dependents and completion blocks wait for the async work, not for the `Task` to be created.
/// `cancel()` cancels the `Task`, and the loader's awaits see it.
open class ThumbnailOperation: Operation, @unchecked Sendable {  // mutable state is only touched under `lock`
    private struct State {
        var isExecuting = false
        var isFinished = false
        var result: Result<Thumbnail, any Error>?
        var task: Task<Void, Never>?
    }

    /// The name of the picture to shrink.
    public let imageName: String
    /// The width of the thumbnail, in pixels.
    public let width: Int
    private let loader: any ThumbnailLoader
    /// Guards `state`. Re-entrant, because announcing a change reads the property back on this thread.
    private let lock = NSRecursiveLock()
    private var state = State()  // protected by lock

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
        lock.withLock { state.isExecuting }
    }

    /// Whether the operation is done: its work ended, or it was cancelled before it started.
    open override var isFinished: Bool {
        lock.withLock { state.isFinished }
    }

    /// The thumbnail, or the error that stopped the work; nil until the operation finished.
    public var result: Result<Thumbnail, any Error>? {
        lock.withLock { state.result }
    }

    /// Launches the work in a `Task` and returns at once, or finishes now if already cancelled.
    ///
    /// It never calls `super.start()`, which would run `main()` and declare the operation
    /// finished the moment it returned.
    open override func start() {
        lock.withLock {
            guard !state.isFinished, !state.isExecuting else { return }
            guard !isCancelled else {
                return finishHoldingLock(with: .failure(CancellationError()))
            }
            willChangeValue(forKey: "isExecuting")
            state.isExecuting = true
            didChangeValue(forKey: "isExecuting")
            // Stored under the lock, so a cancel() that comes next always finds the task.
            state.task = Task { [imageName, width, loader] in
                let outcome: Result<Thumbnail, any Error>
                do {
                    outcome = .success(try await Self.makeThumbnail(imageName, width, loader))
                } catch {
                    outcome = .failure(error)
                }
                self.finish(with: outcome)
            }
        }
    }

    /// Marks the operation cancelled and cancels its `Task`, whose awaits then stop early.
    ///
    /// The operation finishes when the work notices and ends, which a cooperative loader does at once.
    open override func cancel() {
        super.cancel()
        let task = lock.withLock { state.task }
        task?.cancel()
    }

    /// Publishes `outcome` and moves the operation to finished; only the first call has any effect.
    public func finish(with outcome: Result<Thumbnail, any Error>) {
        lock.withLock { finishHoldingLock(with: outcome) }
    }

    /// Stores the outcome, sets both flags together and announces only what really changes.
    ///
    /// Call it with `lock` held.
    private func finishHoldingLock(with outcome: Result<Thumbnail, any Error>) {
        guard !state.isFinished else { return }
        let wasExecuting = state.isExecuting
        willChangeValue(forKey: "isFinished")
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        state.result = outcome
        state.isExecuting = false
        state.isFinished = true
        state.task = nil
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
        didChangeValue(forKey: "isFinished")
    }

    /// The async work itself: fetch, then shrink, stopping early once the task is cancelled.
    private static func makeThumbnail(
        _ name: String, _ width: Int, _ loader: any ThumbnailLoader
    ) async throws -> Thumbnail {
        try Task.checkCancellation()
        let picture = try await loader.fetch(name)
        try Task.checkCancellation()
        return try await loader.resize(picture, to: width)
    }
}
