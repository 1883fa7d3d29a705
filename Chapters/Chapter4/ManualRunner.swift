import Foundation

/// A runner that starts operations by hand, following the guide's manual-execution listing.
///
/// It checks readiness and cancellation before starting, keeps a waiting operation on a timer
/// until it is ready, and lets the caller wait for an operation it started.
// Sendable because we only ever call it from one place, so it needs no lock.
public final class ManualRunner: @unchecked Sendable {
    private let retryInterval: Duration
    private var executing = false
    private var finished = false
    private var waiting = 0

    /// Creates a runner that looks again at a waiting operation every `retryInterval`.
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
        var ranIt = false
        if operation.isReady && !operation.isCancelled {
            if !operation.isAsynchronous {
                // Keep the caller responsive: give the work a thread of its own.
                Thread.detachNewThread { operation.start() }
            } else {
                // Like the book's main(): start it, then report "ran" once it has really run.
                operation.start()
                wait(for: operation)
            }
            ranIt = true
        } else if operation.isCancelled {
            // It was cancelled before it started: move it to the finished state.
            executing = false
            finished = true
            // Say we handled it, so it is not handed to us again.
            ranIt = true
        }
        return ranIt
    }

    /// Starts `operation` as soon as it is ready, retrying on a timer until it is ready or cancelled.
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
