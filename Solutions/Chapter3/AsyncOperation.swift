import Foundation

/// A base class for operations whose work ends on another queue, after `start()` has returned.
///
/// Subclasses override `execute()` to launch their work and call `finish()` on every path out of it.
/// The class keeps `isExecuting` and `isFinished` itself and announces each change, so queues,
/// dependents and completion blocks learn when the work is really over.
open class AsyncOperation: Operation, @unchecked Sendable {  // `state` is only touched under `lock`
    private struct State {
        var isExecuting = false
        var isFinished = false
    }

    /// Guards `state`. Re-entrant, because announcing a change reads the property back on this thread.
    private let lock = NSRecursiveLock()
    private var state = State()  // protected by lock

    /// Creates an operation that has not started yet.
    public override init() {
        super.init()
    }

    /// Always true: `start()` launches the work and returns before it is done.
    open override var isAsynchronous: Bool {
        true
    }

    /// Whether the work has been launched and has not finished yet.
    open override var isExecuting: Bool {
        lock.withLock { state.isExecuting }
    }

    /// Whether the operation is done, because its work ended or because it was cancelled.
    open override var isFinished: Bool {
        lock.withLock { state.isFinished }
    }

    /// Moves to executing and launches the work, or finishes at once if the operation was cancelled.
    ///
    /// It never calls `super.start()`: the inherited version would run `main()` and declare the
    /// operation finished as soon as it returned.
    open override func start() {
        let launches = lock.withLock { () -> Bool in
            guard !state.isFinished else { return false }
            guard !isCancelled else {
                finishHoldingLock()
                return false
            }
            willChangeValue(forKey: "isExecuting")
            state.isExecuting = true
            didChangeValue(forKey: "isExecuting")
            return true
        }
        if launches {
            execute()
        }
    }

    /// Launches the work and returns at once; the work must call `finish()` when it ends.
    ///
    /// Subclasses override this. The default has no work to do and finishes immediately.
    open func execute() {
        finish()
    }

    /// Marks the operation cancelled and, if its work is running, finishes it now.
    ///
    /// The work may still be running when this returns; it should check `isCancelled` and stop.
    open override func cancel() {
        super.cancel()
        lock.withLock {
            if state.isExecuting {
                finishHoldingLock()
            }
        }
    }

    /// Moves the operation to finished and announces it; calling it again has no effect.
    public func finish() {
        lock.withLock { finishHoldingLock() }
    }

    /// Sets both flags together and announces only the values that really change.
    ///
    /// Call it with `lock` held.
    private func finishHoldingLock() {
        let announcesFinished = !state.isFinished
        let announcesExecuting = state.isExecuting
        if announcesFinished { willChangeValue(forKey: "isFinished") }
        if announcesExecuting { willChangeValue(forKey: "isExecuting") }
        state.isExecuting = false
        state.isFinished = true
        if announcesExecuting { didChangeValue(forKey: "isExecuting") }
        if announcesFinished { didChangeValue(forKey: "isFinished") }
    }
}
