import Foundation

/// A fresh queue of the given width for one spec.
///
/// Each spec owns its queues, so an operation that never finishes strands only that spec's
/// queue. Never wait unbounded for such a queue to drain.
public func makeQueue(width: Int = OperationQueue.defaultMaxConcurrentOperationCount) -> OperationQueue {
    let queue = OperationQueue()
    queue.name = "spec queue"
    queue.maxConcurrentOperationCount = width
    return queue
}

extension OperationQueue {
    /// Adds `operations` one by one, in order, without waiting for any of them.
    ///
    /// `addOperations(_:waitUntilFinished:)` is unavailable from async code even when it would
    /// not wait, so async specs use this instead.
    public func enqueue(_ operations: [Operation]) {
        for operation in operations {
            addOperation(operation)
        }
    }
}
