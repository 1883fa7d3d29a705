import Foundation

/// Saves notes into the app's note store in the background, on the store's own dispatch queue.
///
/// Call it from the main queue. `onSaved` and every `done` run on the main queue.
public final class SyncEngine: @unchecked Sendable {  // the store is set once, by open()
    /// The queue upload jobs wait in; once the store is open it runs them on the store's queue.
    private let queue: OperationQueue
    private let onSaved: @Sendable (Note) -> Void
    private var store: (any NoteStore)?

    /// Progress of every upload asked for: one unit per note saved.
    public var progress: Progress { queue.progress }

    /// Creates an engine that calls `onSaved` on the main queue for each note it saved.
    ///
    /// - Parameter queue: An empty operation queue for the engine's jobs alone; the engine sets it up.
    public init(queue: OperationQueue = OperationQueue(), onSaved: @escaping @Sendable (Note) -> Void = { _ in }) {
        self.queue = queue
        queue.name = "sync"
        // Nothing can be saved before the store is open: jobs wait in the suspended queue.
        queue.isSuspended = true
        self.onSaved = onSaved
    }

    /// Starts saving into `store`; jobs asked for before now go first.
    public func open(_ store: any NoteStore) {
        self.store = store
        // The store's queue is serial, so the jobs run one at a time, on the right queue.
        queue.underlyingQueue = store.queue
        queue.isSuspended = false
    }

    /// Saves `notes` in the background, then calls `done` on the main queue.
    @discardableResult
    public func upload(_ notes: [Note], then done: @escaping @Sendable () -> Void = {}) -> [UploadJob] {
        let jobs = notes.map(makeJob)
        queue.addOperations(jobs, waitUntilFinished: false)
        // Runs once everything asked for so far is saved.
        queue.addBarrierBlock(done)
        return jobs
    }

    /// Saves `note` before any background upload that has not started yet.
    @discardableResult
    public func uploadNow(_ note: Note) -> UploadJob {
        let job = makeJob(note)
        job.queuePriority = .veryHigh
        job.qualityOfService = .userInitiated
        queue.addOperation(job)
        return job
    }

    /// Holds the engine's updates until `resumeUpdates()`; other main-queue work goes on.
    public func pauseUpdates() {
        OperationQueue.main.isSuspended = true
    }

    /// Delivers the held updates, in order, and lets new ones through again.
    public func resumeUpdates() {
        OperationQueue.main.isSuspended = false
    }

    /// Cancels every upload not yet saved and drops every update not yet delivered.
    public func stop() {
        queue.cancelAllOperations()
        OperationQueue.main.cancelAllOperations()
    }

    private func makeJob(_ note: Note) -> UploadJob {
        UploadJob(note: note) { [weak self] note in
            guard let self, let store else { return }
            store.save(note)
            OperationQueue.main.addOperation { self.onSaved(note) }
        }
    }
}
