import Foundation

/// An importer that copies photos from a source through one operation queue.
public final class PhotoImporter: @unchecked Sendable {  // the queue does its own locking, right?
    /// The queue the imports run on.
    public let queue: OperationQueue
    private let source: any PhotoSource
    private let onReport: @Sendable (String, ImportOutcome) -> Void
    /// How many copies run at once; the queue spreads its work over this many threads.
    private let width: Int
    /// Photos added but not started yet.
    private var waiting: [PhotoImport] = []

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
        self.queue = queue
        self.source = source
        self.onReport = onReport
        self.width = width  // the queue picks up the width from the work it gets
    }

    /// Adds one photo to the queue and returns its import.
    @discardableResult
    public func add(_ photo: String) -> PhotoImport {
        let job = PhotoImport(photo: photo, source: source)
        queue.addOperation(job)
        waiting.append(job)
        // Now that the queue has it, give it a name and a way to report back.
        job.name = photo
        let onReport = onReport
        // completionBlock takes no arguments, so hand it the outcome up front.
        job.completionBlock = { [outcome = job.outcome] in
            onReport(photo, outcome)  // completion blocks run on the main thread
        }
        return job
    }

    /// Takes a waiting photo off the list.
    public func remove(_ job: PhotoImport) {
        // OperationQueue has no removeOperation, so drop it from our own list instead.
        waiting.removeAll { $0 === job }
    }

    /// Stops the whole import.
    public func cancelAll() {
        // Stop the queue: nothing in it will run any more.
        queue.isSuspended = true
        waiting.removeAll()
    }

    /// Stops new copies from starting and calls `ready` once the copies already running are done.
    public func pauseForEject(then ready: @escaping @Sendable () -> Void) {
        // A suspended queue freezes everything in it, so the card is safe to pull right away.
        queue.isSuspended = true
        ready()
    }

    /// Lets waiting photos start again after `pauseForEject`.
    public func resume() {
        queue.isSuspended = false
    }

    /// Blocks the calling thread until the queue is empty, including photos added meanwhile.
    public func waitForAll() {
        // Wait for each photo in the queue, one after another.
        for job in queue.operations {
            job.waitUntilFinished()
        }
    }

    /// Imports `photos` in batches of `batchSize`, adding each batch once the previous one is
    /// done, then calls `done`.
    public func importAll(
        _ photos: [String], batchSize: Int, then done: @escaping @Sendable () -> Void
    ) {
        // The queue only runs `width` at a time anyway, so hand it everything now.
        let jobs = photos.map { add($0) }
        let finished = BlockOperation(block: done)
        jobs.forEach(finished.addDependency)
        queue.addOperation(finished)
    }

    /// The outcome of the import of `photo`, if this importer ever added it.
    public func outcome(of photo: String) -> ImportOutcome? {
        // The queue holds every operation it was given.
        let job = queue.operations.first { $0.name == photo } as? PhotoImport
        return job?.outcome
    }
}
