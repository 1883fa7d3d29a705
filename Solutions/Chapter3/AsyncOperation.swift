import Foundation

/// A base class for operations whose work ends on another queue, after `start()` has returned.
///
/// Subclasses override `execute()` to launch their work and call `finish()` on every path out of it,
/// including the one taken when the work notices that the operation was cancelled. The class keeps
/// `isExecuting` and `isFinished` itself and announces each change, so queues, dependents and
/// completion blocks learn when the work is really over.
open class AsyncOperation: Operation, @unchecked Sendable {  // `flags` is only touched under `flagsLock`
    private struct Flags {
        var executing = false
        var finished = false
    }

    /// Guards `flags`, and is held while a change is announced, so no reader sees a change half made.
    /// Re-entrant, because announcing a change reads the property back on this thread.
    private let flagsLock = NSRecursiveLock()
    private var flags = Flags()  // protected by flagsLock

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
        flagsLock.withLock { flags.executing }
    }

    /// Whether the operation is done, because its work ended or because it was cancelled before it started.
    open override var isFinished: Bool {
        flagsLock.withLock { flags.finished }
    }

    /// Moves to executing and launches the work, or finishes at once if the operation was cancelled.
    ///
    /// It never calls `super.start()`, which would run `main()` and keep state of its own.
    open override func start() {
        let launches = flagsLock.withLock { () -> Bool in
            guard !flags.finished, !flags.executing else { return false }
            guard !isCancelled else {
                finishHoldingLock()
                return false
            }
            willChangeValue(forKey: "isExecuting")
            flags.executing = true
            didChangeValue(forKey: "isExecuting")
            return true
        }
        if launches {
            execute()  // outside the lock: the work may finish on another thread before this returns
        }
    }

    /// Launches the work and returns at once; the work must call `finish()` when it ends.
    ///
    /// Subclasses override this. The default has no work to do and finishes immediately.
    open func execute() {
        finish()
    }

    /// Moves the operation to finished and announces it; calling it again has no effect.
    public func finish() {
        flagsLock.withLock { finishHoldingLock() }
    }

    /// Sets both flags together and announces only the values that really change.
    ///
    /// Call it with `flagsLock` held.
    private func finishHoldingLock() {
        let announcesFinished = !flags.finished
        let announcesExecuting = flags.executing
        if announcesFinished { willChangeValue(forKey: "isFinished") }
        if announcesExecuting { willChangeValue(forKey: "isExecuting") }
        flags.executing = false
        flags.finished = true
        if announcesExecuting { didChangeValue(forKey: "isExecuting") }
        if announcesFinished { didChangeValue(forKey: "isFinished") }
    }
}
