import Foundation

/// Saves notes into the app's note store in the background, on the store's own dispatch queue.
///
/// Call it from the main queue. `onSaved` and every `done` run on the main queue.
public final class SyncEngine: @unchecked Sendable {  // mutable state is only touched under `lock`
    /// The queue upload jobs wait in; once the store is open it runs them on the store's queue.
    private let queue: OperationQueue
    private let onSaved: @Sendable (Note) -> Void
    private let lock = NSLock()
    private var state = State()  // protected by lock

    private struct State {
        /// The store the jobs save into, once it is open.
        var store: (any NoteStore)?
        /// Jobs asked for before the store was open; the queue must stay empty until then.
        var waiting: [UploadJob] = []
        var stopped = false
        var paused = false
        /// Updates that arrived on the main queue while paused, in order.
        var held: [@Sendable () -> Void] = []
    }

    /// Progress of every upload asked for: one unit per note saved.
    public var progress: Progress { queue.progress }

    /// Creates an engine that calls `onSaved` on the main queue for each note it saved.
    ///
    /// - Parameter queue: An empty operation queue for the engine's jobs alone; the engine sets it up.
    public init(queue: OperationQueue = OperationQueue(), onSaved: @escaping @Sendable (Note) -> Void = { _ in }) {
        self.queue = queue
        queue.name = "sync"
        // Width one: the store's queue is serial anyway, and this way the operation queue keeps
        // the choice of what runs next instead of handing every job over in arrival order.
        queue.maxConcurrentOperationCount = 1
        self.onSaved = onSaved
    }

    /// Starts saving into `store`; jobs asked for before now go first. Does nothing after `stop()`.
    public func open(_ store: any NoteStore) {
        let held: [UploadJob] = lock.withLock {
            guard !state.stopped else { return [] }
            state.store = store
            // Allowed only while the queue is empty: the earlier jobs are still in `waiting`.
            queue.underlyingQueue = store.queue
            defer { state.waiting = [] }
            return state.waiting
        }
        queue.addOperations(held, waitUntilFinished: false)
    }

    /// Saves `notes` in the background, then calls `done` on the main queue.
    @discardableResult
    public func upload(_ notes: [Note], then done: @escaping @Sendable () -> Void = {}) -> [UploadJob] {
        let jobs = notes.map(makeJob)
        // Before adding them: the queue counts a unit for each job that ends its main().
        progress.totalUnitCount += Int64(jobs.count)
        // A main-queue operation that depends on the batch, not a barrier: a barrier would also
        // hold back every job added after it, urgent ones included.
        let finished = BlockOperation { [weak self] in self?.deliver(done) }
        jobs.forEach(finished.addDependency)
        enqueue(jobs)
        OperationQueue.main.addOperation(finished)
        return jobs
    }

    /// Saves `note` before any background upload that has not started yet.
    @discardableResult
    public func uploadNow(_ note: Note) -> UploadJob {
        let job = makeJob(note)
        job.queuePriority = .veryHigh
        job.qualityOfService = .userInitiated
        progress.totalUnitCount += 1
        enqueue([job])
        return job
    }

    /// Holds the engine's updates until `resumeUpdates()`; other main-queue work goes on.
    public func pauseUpdates() {
        lock.withLock { state.paused = true }
    }

    /// Delivers the held updates, in order, and lets new ones through again.
    public func resumeUpdates() {
        let held = lock.withLock {
            state.paused = false
            defer { state.held = [] }
            return state.stopped ? [] : state.held
        }
        held.forEach { $0() }
    }

    /// Cancels every upload not yet saved, those still waiting for `open(_:)` included, and
    /// every upload asked for later; drops every update not yet delivered.
    public func stop() {
        // The held updates will never be delivered: they go too, and with them the caller's
        // closures, freed once the lock is released (whatever they free may call the engine).
        let (waiting, _) = lock.withLock {
            state.stopped = true
            defer { (state.waiting, state.held) = ([], []) }
            return (state.waiting, state.held)
        }
        queue.cancelAllOperations()
        end(waiting)
    }

    deinit {
        // Jobs still waiting for open(_:) are in no queue: end them, or the batch's end that
        // depends on them waits on the main queue for good, and keeps the caller's done.
        end(state.waiting)
    }

    private func makeJob(_ note: Note) -> UploadJob {
        UploadJob(note: note) { [weak self] note in
            guard let self else { return }
            let store = lock.withLock { state.store }
            store?.save(note)
            // The update keeps onSaved, never the engine: held while paused, it is stored in the
            // engine, and an engine that held itself would outlive a stop() or its owner.
            deliver { [onSaved] in onSaved(note) }
        }
    }

    /// Adds `jobs` to the queue once the store is open, keeps them until then, and ends them at
    /// once after `stop()`.
    private func enqueue(_ jobs: [UploadJob]) {
        enum Fate { case queue, wait, end }
        let fate: Fate = lock.withLock {
            if state.stopped { return .end }
            if state.store == nil {
                state.waiting += jobs
                return .wait
            }
            return .queue
        }
        switch fate {
        case .queue:
            queue.addOperations(jobs, waitUntilFinished: false)
            // A stop() between the check above and the adding cancelled none of them.
            if lock.withLock({ state.stopped }) { jobs.forEach { $0.cancel() } }
        case .wait: break
        case .end: end(jobs)
        }
    }

    /// Cancels jobs that no queue holds and finishes them here, so that what depends on them (a
    /// batch's end) is released: a cancelled operation that is never started never finishes.
    private func end(_ jobs: [UploadJob]) {
        for job in jobs {
            job.cancel()
            job.start()  // cancelled, so it finishes without calling main()
        }
    }

    /// Runs `update` on the main queue, unless the engine has stopped by then; holds it while paused.
    ///
    /// Decided when it runs, not when it is sent: an update sent just before `stop()` or
    /// `pauseUpdates()` is still waiting on the main queue when they return.
    private func deliver(_ update: @escaping @Sendable () -> Void) {
        OperationQueue.main.addOperation { [weak self] in
            guard let self else { return }
            let now: Bool = lock.withLock {
                if state.stopped { return false }
                if state.paused { state.held.append(update) }
                return !state.paused
            }
            if now { update() }
        }
    }
}
