import Foundation

/// An importer that copies photos from a source through one operation queue.
public final class PhotoImporter: @unchecked Sendable {  // `waiting` is only touched under `lock`
    /// The queue the imports run on.
    public let queue: OperationQueue
    private let source: any PhotoSource
    private let onReport: @Sendable (String, ImportOutcome) -> Void
    /// How many copies may run at once.
    private let width: Int
    private let lock = NSLock()
    /// The photos still to import, as the import list shows them.
    private var waiting: [PhotoImport] = []  // protected by lock

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
        queue.qualityOfService = .utility
        self.queue = queue
        self.source = source
        self.onReport = onReport
        self.width = width
    }

    /// Adds one photo to the queue and returns its import, named after the photo.
    @discardableResult
    public func add(_ photo: String) -> PhotoImport {
        let job = makeImport(photo)
        queue.addOperation(job)
        track(job)
        return job
    }

    /// Takes a waiting photo off the list.
    public func remove(_ job: PhotoImport) {
        lock.withLock { waiting.removeAll { $0 === job } }
    }

    /// Stops the whole import: what the queue holds and the batches `importAll` has yet to add.
    public func cancelAll() {
        // Hold the queue still so that nothing starts while we cancel.
        queue.isSuspended = true
        queue.cancelAllOperations()
        lock.withLock { waiting.removeAll() }
    }

    /// Stops new copies from starting and calls `ready` once the copies already running are done.
    public func pauseForEject(then ready: @escaping @Sendable () -> Void) {
        queue.isSuspended = true
        ready()
    }

    /// Lets waiting photos start again after `pauseForEject`.
    public func resume() {
        queue.isSuspended = false
    }

    /// Blocks the calling thread until the queue is empty, including photos added meanwhile.
    public func waitForAll() {
        for job in queue.operations {
            job.waitUntilFinished()
        }
    }

    /// Imports `photos` in batches of `batchSize`, adding each batch once the previous one is
    /// done, then calls `done` once, on any thread, also when `cancelAll` ended the import early.
    public func importAll(
        _ photos: [String], batchSize: Int, then done: @escaping @Sendable () -> Void
    ) {
        // Each batch starts only when the one before it has finished.
        var previous: [PhotoImport] = []
        var all: [PhotoImport] = []
        for start in stride(from: 0, to: photos.count, by: max(1, batchSize)) {
            let batch = photos[start..<min(start + batchSize, photos.count)].map(makeImport)
            for job in batch {
                previous.forEach(job.addDependency)
            }
            previous = batch
            all += batch
        }
        let finished = BlockOperation(block: done)
        all.forEach(finished.addDependency)
        queue.addOperations(all + [finished], waitUntilFinished: false)
        all.forEach(track)
    }

    /// The outcome of the import of `photo`, if this importer ever added it.
    public func outcome(of photo: String) -> ImportOutcome? {
        let job = queue.operations.first { $0.name == photo } as? PhotoImport
        return job?.outcome
    }

    private func makeImport(_ photo: String) -> PhotoImport {
        let job = PhotoImport(photo: photo, source: source)
        job.name = photo
        return job
    }

    /// Puts `job` on the import list and reports it once it is done.
    private func track(_ job: PhotoImport) {
        lock.withLock { waiting.append(job) }
        let photo = job.photo
        let onReport = onReport
        // Capturing `job` in its own completion block would keep it alive forever.
        let outcome = job.outcome
        job.completionBlock = { [weak self] in
            self?.untrack(photo)
            onReport(photo, outcome)
        }
    }

    private func untrack(_ photo: String) {
        lock.withLock { waiting.removeAll { $0.photo == photo } }
    }
}
