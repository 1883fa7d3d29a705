import Foundation

/// A concurrent operation that runs its work on a thread of its own, so starting it never blocks.
///
/// This file is provided ready to use: it is the same in the starter and in the reference. It is
/// the kind of operation the runner starts from the calling thread without waiting for it.
public final class ThreadedOperation: Operation, @unchecked Sendable {  // `state` is under `lock`
    private let work: @Sendable () -> Void
    private let lock = NSLock()
    private var state = (executing: false, finished: false)  // protected by lock

    /// Creates an operation that runs `work` on a new thread when started.
    public init(work: @escaping @Sendable () -> Void) {
        self.work = work
    }

    /// Always true: `start()` returns before the work is done.
    override public var isAsynchronous: Bool { true }

    /// Whether the work has begun and not yet ended.
    override public var isExecuting: Bool { lock.withLock { state.executing } }

    /// Whether the operation is done, because its work ended or because it was cancelled.
    override public var isFinished: Bool { lock.withLock { state.finished } }

    /// Detaches a thread that runs the work, or finishes at once if the operation was cancelled.
    override public func start() {
        if isCancelled {
            finish()
            return
        }
        willChangeValue(forKey: "isExecuting")
        lock.withLock { state.executing = true }
        didChangeValue(forKey: "isExecuting")
        Thread.detachNewThread { [self] in
            if !isCancelled { work() }
            finish()
        }
    }

    private func finish() {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        lock.withLock {
            state.executing = false
            state.finished = true
        }
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}
