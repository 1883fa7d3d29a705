import Foundation

/// A runner that starts operations by hand, checking before every `start()` that it is allowed.
///
/// It never starts an operation that is not ready, already started, finished or owned by a
/// queue; it finishes a cancelled one by starting it; it retries a waiting one on a timer; and it
/// waits for one by blocking, never by spinning.
public final class ManualRunner: @unchecked Sendable {  // `books` is only touched under `lock`
    private let retryInterval: DispatchTimeInterval
    private let retryQueue = DispatchQueue(label: "OperationKata.ManualRunner.retry")
    private let lock = NSLock()
    private var books = Books()  // protected by lock

    /// What the runner is responsible for.
    private struct Books {
        /// One repeating timer for each operation that was not ready when it was handed over.
        var retrying: [ObjectIdentifier: any DispatchSourceTimer] = [:]
        /// The operations the runner put in a queue, kept until they finish.
        var queued: [ObjectIdentifier: Operation] = [:]
    }

    /// Creates a runner that looks again at a waiting operation every `retryInterval` (1 ms at least).
    public init(retryInterval: Duration = .milliseconds(50)) {
        let (seconds, attoseconds) = retryInterval.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        self.retryInterval = .nanoseconds(Int(max(nanoseconds, 1_000_000)))
    }

    /// How many operations the runner is still retrying because they were not ready.
    public var waitingCount: Int {
        lock.withLock { books.retrying.count }
    }

    /// Starts `operation` now if that is allowed; returns false only if it is not ready yet.
    ///
    /// A non-concurrent operation runs on the calling thread and is done when this returns; a
    /// concurrent one is started here and keeps running after this returns. A cancelled
    /// operation is started so that it moves to finished without running its work. An operation
    /// that already started, finished or sits in a queue is left alone.
    ///
    /// - Returns: Whether the runner is done with the operation; false means "try again later".
    @discardableResult
    public func perform(_ operation: Operation) -> Bool {
        if operation.isExecuting || operation.isFinished || isQueued(operation) {
            return true  // someone else started it, or will: starting it again would trap
        }
        if operation.isCancelled {
            operation.start()  // skips the work and moves the operation itself to finished
            return true
        }
        guard operation.isReady else { return false }
        operation.start()
        return true
    }

    /// Starts `operation` as soon as it is ready, retrying on a timer until it is ready or cancelled.
    ///
    /// An operation handed over again while the runner is still retrying it is started once.
    public func run(_ operation: Operation) {
        if perform(operation) { return }
        let key = ObjectIdentifier(operation)
        let newTimer: (any DispatchSourceTimer)? = lock.withLock {
            guard books.retrying[key] == nil else { return nil }  // already retrying it
            let timer = DispatchSource.makeTimerSource(queue: retryQueue)
            books.retrying[key] = timer
            return timer
        }
        guard let timer = newTimer else { return }
        timer.setEventHandler { [self] in
            if perform(operation) { stopRetrying(key) }
        }
        timer.schedule(deadline: .now() + retryInterval, repeating: retryInterval)
        timer.resume()
    }

    /// Adds `operation` to `queue` unless it was started by hand or is already taken.
    ///
    /// - Returns: Whether the operation was added; the queue then owns it, and `perform` leaves
    ///   it alone.
    @discardableResult
    public func enqueue(_ operation: Operation, on queue: OperationQueue) -> Bool {
        let key = ObjectIdentifier(operation)
        let accepted = lock.withLock {
            guard !operation.isExecuting, !operation.isFinished,
                books.retrying[key] == nil, books.queued[key] == nil
            else { return false }
            books.queued[key] = operation
            return true
        }
        if accepted { queue.addOperation(operation) }
        return accepted
    }

    /// Blocks the calling thread, without using the processor, until `operation` has finished.
    ///
    /// Call it from synchronous code only, and only for an operation that was started or will be.
    public func wait(for operation: Operation) {
        operation.waitUntilFinished()
    }

    private func isQueued(_ operation: Operation) -> Bool {
        lock.withLock {
            books.queued = books.queued.filter { !$0.value.isFinished }
            return books.queued[ObjectIdentifier(operation)] != nil
        }
    }

    private func stopRetrying(_ key: ObjectIdentifier) {
        let timer = lock.withLock { books.retrying.removeValue(forKey: key) }
        timer?.cancel()
    }
}
