import Foundation
import Synchronization

/// An importer that copies photos from a source through one operation queue it controls as a whole.
public final class PhotoImporter: Sendable {
    /// The queue the imports run on.
    public let queue: OperationQueue
    private let source: any PhotoSource
    private let onReport: @Sendable (String, ImportOutcome) -> Void
    /// Runs the bookkeeping operations (next batch, ready to eject); never suspended, never limited.
    private let control = OperationQueue()
    /// Every import this importer created, by photo: the queue forgets them once they finish.
    private let jobs = Mutex<[String: PhotoImport]>([:])
    /// How many times `cancelAll` ran. A batched import started before the latest cancel adds
    /// nothing more; the lock is held while a batch is added, so no cancel slips in between.
    private let cancels = Mutex(0)

    /// Creates an importer that copies from `source`, at most `width` photos at a time.
    ///
    /// - Parameters:
    ///   - source: Where the photos come from.
    ///   - width: How many copies may run at once.
    ///   - queue: The queue to run the imports on.
    ///   - onReport: Called on the main queue once per finished import, with its outcome.
    public init(
        source: any PhotoSource,
        width: Int,
        queue: OperationQueue = OperationQueue(),
        onReport: @escaping @Sendable (String, ImportOutcome) -> Void = { _, _ in }
    ) {
        queue.name = "photo import"
        queue.maxConcurrentOperationCount = width
        self.queue = queue
        self.source = source
        self.onReport = onReport
    }

    /// Adds one photo to the queue and returns its import, named after the photo.
    @discardableResult
    public func add(_ photo: String) -> PhotoImport {
        let job = PhotoImport(photo: photo, source: source)
        configure(job)
        queue.addOperation(job)
        return job
    }

    /// Takes a waiting photo off the list: the only way out of a queue is to cancel.
    public func remove(_ job: PhotoImport) {
        job.cancel()
    }

    /// Cancels every import the queue holds, and the batches `importAll` has yet to add.
    public func cancelAll() {
        cancels.withLock { count in
            count += 1
            // The queue then starts each cancelled import so that it can finish.
            queue.cancelAllOperations()
        }
    }

    /// Stops new copies from starting and calls `ready` once the copies already running are done.
    public func pauseForEject(then ready: @escaping @Sendable () -> Void) {
        queue.isSuspended = true
        // Suspending does not pause what is running: wait for those copies to finish.
        let running = jobs.withLock { $0.values.filter(\.isExecuting) }
        let whenDone = BlockOperation(block: ready)
        running.forEach(whenDone.addDependency)
        control.addOperation(whenDone)
    }

    /// Lets waiting photos start again after `pauseForEject`.
    public func resume() {
        queue.isSuspended = false
    }

    /// Blocks the calling thread until the queue is empty, including photos added meanwhile.
    public func waitForAll() {
        queue.waitUntilAllOperationsAreFinished()
    }

    /// Imports `photos` in batches of `batchSize`, adding each batch once the previous one is
    /// done, then calls `done` once, on any thread, also when `cancelAll` ended the import early.
    public func importAll(
        _ photos: [String], batchSize: Int, then done: @escaping @Sendable () -> Void
    ) {
        let since = cancels.withLock { $0 }
        feed(photos[...], batchSize: max(1, batchSize), since: since, then: done)
    }

    /// The outcome of the import of `photo`, if this importer ever added it.
    public func outcome(of photo: String) -> ImportOutcome? {
        jobs.withLock { $0[photo] }?.outcome
    }

    /// Adds the next batch of `rest` unless `cancelAll` ran since `since`; calls `done` at the end.
    private func feed(
        _ rest: ArraySlice<String>, batchSize: Int, since: Int,
        then done: @escaping @Sendable () -> Void
    ) {
        let added = cancels.withLock { count in
            guard count == since, !rest.isEmpty else { return false }
            let batch = rest.prefix(batchSize).map { PhotoImport(photo: $0, source: source) }
            batch.forEach(configure)
            let later = rest.dropFirst(batchSize)
            let nextBatch = BlockOperation { [self] in
                feed(later, batchSize: batchSize, since: since, then: done)
            }
            batch.forEach(nextBatch.addDependency)
            control.addOperation(nextBatch)
            queue.addOperations(batch, waitUntilFinished: false)
            return true
        }
        if !added { done() }
    }

    /// Names `job`, gives it its completion block and records it; call before adding it.
    private func configure(_ job: PhotoImport) {
        let photo = job.photo
        job.name = photo
        let onReport = onReport
        // The block takes no arguments and runs after the copy is over: read the result from
        // the operation, then hand it to the main queue.
        job.completionBlock = { [weak job] in
            guard let job else { return }
            let outcome = job.outcome
            OperationQueue.main.addOperation { onReport(photo, outcome) }
        }
        jobs.withLock { $0[photo] = job }
    }
}
