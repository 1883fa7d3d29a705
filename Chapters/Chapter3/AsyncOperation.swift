import Foundation

/// A base class for operations whose work ends on another thread, after `start()` has returned.
///
/// Subclasses override `execute()` to do their work and call `finish()` at the end.
open class AsyncOperation: Operation, @unchecked Sendable {  // two Bools, what could go wrong?
    private var executing = false
    private var finished = false

    /// Creates an operation that has not started yet.
    public override init() {
        super.init()
    }

    // The book overrides isConcurrent here, but that property does not even exist on Linux.
    // Queues run every operation on a thread of their own anyway, so this one is left out.

    /// Ready whenever it is neither running nor done.
    open override var isReady: Bool {
        !executing && !finished
    }

    /// Whether the work is running.
    open override var isExecuting: Bool {
        executing
    }

    /// Whether the work is done.
    open override var isFinished: Bool {
        finished
    }

    /// Runs `main()` on a new thread and returns at once.
    open override func start() {
        // If cancelled, just return.
        if isCancelled {
            return
        }
        // Now run main() on a separate thread.
        willChangeValue(forKey: "isExecuting")
        Thread.detachNewThread { self.main() }
        executing = true
        didChangeValue(forKey: "isExecuting")
    }

    /// Calls `execute()`; it runs on the thread that `start()` detached.
    open override func main() {
        execute()
    }

    /// Does the work; subclasses override it and call `finish()` at the end.
    open func execute() {
        finish()
    }

    /// Lets everyone know that the work is over.
    public func finish() {
        willChangeValue(forKey: "isFinished")
        willChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
        executing = false
        finished = true
    }
}
