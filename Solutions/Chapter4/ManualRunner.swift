import Foundation

/// A runner that starts operations by hand, checking before every `start()` that it is allowed.
///
/// It never starts an operation that is not ready, already started, finished, owned by a queue
/// or being started by another thread; it finishes a cancelled one by starting it; it retries a
/// waiting one on a timer; and it waits for one by blocking, never by spinning.
public final class ManualRunner: @unchecked Sendable {  // `books` is only touched under `lock`
    private let retryInterval: DispatchTimeInterval
    private let retryQueue = DispatchQueue(label: "OperationKata.ManualRunner.retry")
    private let lock = NSLock()  // guards `books` only; never held while an operation is called
    private var books = Books()  // protected by lock

    /// What the runner is responsible for.
    private struct Books {
        /// One repeating timer for each operation that was not ready when it was handed over.
        var retrying: [ObjectIdentifier: any DispatchSourceTimer] = [:]
        /// The operations the runner put in a queue, held weakly: the queue owns them, and an
        /// entry whose operation was freed is no one's, whatever object now has its address.
        var queued: [ObjectIdentifier: Queued] = [:]
        /// The operations one thread is checking or starting right now; every other thread keeps off.
        var claimed: Set<ObjectIdentifier> = []
    }

    /// An operation the runner put in a queue, for as long as anything else keeps it.
    private struct Queued {
        weak var operation: Operation?
    }

    /// What one attempt to start an operation came to.
    private enum Attempt {
        /// The operation is started, finished or a queue's: the runner is done with it.
        case done
        /// Its dependencies have not finished: look again later.
        case notReady
        /// Another thread is checking or starting it right now.
        case busy
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

    /// Starts `operation` on the calling thread now if that is allowed; false only if it is not ready yet.
    ///
    /// A non-concurrent operation runs on the calling thread and is done when this returns; a
    /// concurrent one is started here and keeps running after this returns. A cancelled
    /// operation is started so that it moves to finished without running its work. An operation
    /// that already started, finished, sits in a queue or is being started by another thread is
    /// left alone.
    ///
    /// - Returns: Whether the runner is done with the operation; false means "try again later".
    @discardableResult
    public func perform(_ operation: Operation) -> Bool {
        attempt(operation, nonConcurrentOnOwnThread: false) != .notReady
    }

    /// Starts `operation` as soon as it is ready, without ever blocking the caller.
    ///
    /// A non-concurrent operation gets a thread of its own; an operation that is not ready is
    /// looked at again every `retryInterval` until it is ready or cancelled. An operation handed
    /// over again while the runner is still retrying it is started once.
    public func run(_ operation: Operation) {
        if attempt(operation, nonConcurrentOnOwnThread: true) == .done { return }
        let key = ObjectIdentifier(operation)
        let newTimer: (any DispatchSourceTimer)? = lock.withLock {
            guard books.retrying[key] == nil else { return nil }  // already retrying it
            let timer = DispatchSource.makeTimerSource(queue: retryQueue)
            books.retrying[key] = timer
            return timer
        }
        guard let timer = newTimer else { return }
        timer.setEventHandler { [self] in
            if attempt(operation, nonConcurrentOnOwnThread: true) == .done { stopRetrying(key) }
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
            guard books.retrying[key] == nil, books.queued[key]?.operation !== operation,
                !books.claimed.contains(key)
            else { return false }
            books.claimed.insert(key)  // keeps every start by hand off while the checks run
            return true
        }
        guard accepted else { return false }
        let startable = !operation.isExecuting && !operation.isFinished
        lock.withLock {
            books.claimed.remove(key)
            if startable { books.queued[key] = Queued(operation: operation) }
        }
        if startable { queue.addOperation(operation) }
        return startable
    }

    /// Blocks the calling thread, without using the processor, until `operation` has finished.
    ///
    /// Call it from synchronous code only, and only for an operation that was started or will be.
    public func wait(for operation: Operation) {
        operation.waitUntilFinished()
    }

    /// Claims `operation`, checks that it may be started, and starts it.
    ///
    /// The claim makes the checks and the `start()` one step: two threads that hand over the same
    /// operation at once cannot both pass the checks and both call `start()`.
    private func attempt(_ operation: Operation, nonConcurrentOnOwnThread: Bool) -> Attempt {
        let key = ObjectIdentifier(operation)
        let claimed = lock.withLock { books.claimed.insert(key).inserted }
        guard claimed else { return .busy }
        if operation.isExecuting || operation.isFinished || isQueued(operation) {
            release(key)
            return .done  // someone else started it, or will: starting it again would trap
        }
        if operation.isCancelled {
            operation.start()  // skips the work and moves the operation itself to finished
            release(key)
            return .done
        }
        guard operation.isReady else {
            release(key)
            return .notReady
        }
        if nonConcurrentOnOwnThread && !operation.isAsynchronous {
            Thread.detachNewThread { [self] in
                operation.start()  // runs the whole work on this new thread
                release(key)
            }
        } else {
            operation.start()
            release(key)
        }
        return .done
    }

    private func release(_ key: ObjectIdentifier) {
        _ = lock.withLock { books.claimed.remove(key) }
    }

    private func isQueued(_ operation: Operation) -> Bool {
        let key = ObjectIdentifier(operation)
        let queued = lock.withLock {
            books.queued = books.queued.filter { $0.value.operation != nil }  // forget freed ones
            return books.queued[key]?.operation === operation
        }
        guard queued else { return false }
        if !operation.isFinished { return true }
        _ = lock.withLock { books.queued.removeValue(forKey: key) }  // the queue is done with it
        return false
    }

    private func stopRetrying(_ key: ObjectIdentifier) {
        let timer = lock.withLock { books.retrying.removeValue(forKey: key) }
        timer?.cancel()
    }
}
