import Foundation

/// A runner that starts operations by hand, written after the guide's manual-execution listing.
///
/// It checks readiness and cancellation before starting, keeps a waiting operation on a timer
/// until it is ready, and lets the caller wait for an operation it started.
// Sendable because we only ever call it from one place, so it needs no lock.
public final class ManualRunner: @unchecked Sendable {
    private let retryInterval: Duration
    private var executing = false
    private var finished = false
    private var waiting = 0

    /// Creates a runner that looks again at a waiting operation every `retryInterval` (1 ms at least).
    public init(retryInterval: Duration = .milliseconds(50)) {
        self.retryInterval = retryInterval
    }

    /// How many operations the runner is still retrying because they were not ready.
    public var waitingCount: Int {
        waiting
    }

    /// Starts `operation` now if it is ready; returns false if it is not ready yet.
    ///
    /// - Returns: Whether the operation was handled; false means "try again later".
    @discardableResult
    public func perform(_ operation: Operation) -> Bool {
        var handled = false
        if operation.isReady && !operation.isCancelled {
            if !operation.isAsynchronous {
                // Non-concurrent: the work runs right here, inside start().
                operation.start()
            } else {
                // Concurrent: start it from a fresh thread.
                Thread.detachNewThread { operation.start() }
            }
            handled = true
        } else if operation.isCancelled {
            // Nobody will run a cancelled operation, so record it as over.
            executing = false
            finished = true
            // True tells the caller to stop offering it to us.
            handled = true
        }
        return handled
    }

    /// Starts `operation` as soon as it is ready, without blocking the caller.
    ///
    /// An operation that is not ready is looked at again on a timer until it is ready or cancelled.
    public func run(_ operation: Operation) {
        if perform(operation) { return }
        waiting += 1
        let seconds =
            Double(retryInterval.components.seconds)
            + Double(retryInterval.components.attoseconds) / 1e18
        _ = Timer.scheduledTimer(withTimeInterval: seconds, repeats: true) { [self] timer in
            if perform(operation) {
                timer.invalidate()
                waiting -= 1
            }
        }
    }

    /// Adds `operation` to `queue`.
    ///
    /// - Returns: Whether the operation was added.
    @discardableResult
    public func enqueue(_ operation: Operation, on queue: OperationQueue) -> Bool {
        queue.addOperation(operation)
        return true
    }

    /// Returns once `operation` has finished.
    public func wait(for operation: Operation) {
        while !operation.isFinished {}
    }
}
