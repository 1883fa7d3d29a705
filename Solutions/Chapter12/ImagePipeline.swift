import Foundation

/// Makes the thumbnails of a scrolling list: fetch, decode and resize, each stage on its own queue.
///
/// The list view calls it on the main queue, and gets every thumbnail, or the error that stopped
/// it, on the main queue. A row that leaves the screen gets nothing more.
public final class ImagePipeline: @unchecked Sendable {  // mutable state only under `lock`
    /// One row's request while it is on its way.
    private final class RowRequest: @unchecked Sendable {  // `visible` and `stage` are guarded by the pipeline's lock
        let row: Int
        let url: URL
        let deliver: @Sendable (Result<Bitmap, any Error>) -> Void
        var visible: Bool
        /// The operation that runs, or waits to run, this request's current stage.
        var stage: Operation?

        init(row: Int, url: URL, visible: Bool, deliver: @escaping @Sendable (Result<Bitmap, any Error>) -> Void) {
            self.row = row
            self.url = url
            self.visible = visible
            self.deliver = deliver
        }
    }

    private let fetcher: any ImageFetcher
    private let decoder: any ImageDecoder
    private let resizer: any ImageResizer
    private let fetchQueue: OperationQueue
    private let decodeQueue: OperationQueue
    private let resizeQueue: OperationQueue
    /// Guards `rows` and the requests in it; never held while calling out.
    private let lock = NSLock()
    private var rows: [Int: RowRequest] = [:]  // protected by lock; only requests still on their way

    /// Creates a pipeline whose stages run at most `widths` at a time each.
    public init(
        fetcher: any ImageFetcher, decoder: any ImageDecoder, resizer: any ImageResizer,
        widths: StageWidths = StageWidths()
    ) {
        self.fetcher = fetcher
        self.decoder = decoder
        self.resizer = resizer
        fetchQueue = Self.queue("fetch", width: widths.fetches)
        decodeQueue = Self.queue("decode", width: widths.decodes)
        resizeQueue = Self.queue("resize", width: widths.resizes)
    }

    private static func queue(_ name: String, width: Int) -> OperationQueue {
        let queue = OperationQueue()
        queue.name = name
        queue.maxConcurrentOperationCount = width
        return queue
    }

    /// Asks for the thumbnail of `url` for `row`; `deliver` gets it, or the error, once, on the main queue.
    ///
    /// `visible` says whether the row is on screen now or only soon (prefetching). A new request
    /// for a row replaces the one it had: the old one delivers nothing.
    public func request(
        row: Int, url: URL, visible: Bool,
        deliver: @escaping @Sendable (Result<Bitmap, any Error>) -> Void
    ) {
        let request = RowRequest(row: row, url: url, visible: visible, deliver: deliver)
        let replaced = lock.withLock { rows.updateValue(request, forKey: row)?.stage }
        replaced?.cancel()
        fetch(request)
    }

    /// Tells the pipeline that `row` scrolled into view: the stage it waits for, if any, goes first.
    public func rowBecameVisible(_ row: Int) {
        let raise: (() -> Void)? = lock.withLock {
            guard let request = rows[row], !request.visible else { return nil }
            request.visible = true
            // A queued operation's priority may be read too late if changed (Chapter 6): a stage
            // that has not started is replaced by one queued at the new priority instead.
            switch request.stage {
            case let fetch as FetchOperation where fetch.isWaiting:
                return { self.fetch(request) }
            case let stage as StageOperation:
                // Taken from the waiting operation, which then finds nothing to run.
                guard let work = stage.takeWorkIfNotStarted() else { return nil }
                return { self.queue(stage.kind, for: request, work: work) }
            default:
                return nil
            }
        }
        raise?()
    }

    /// Tells the pipeline that `row` left the screen: its stages stop, and it gets nothing.
    public func rowLeftScreen(_ row: Int) {
        let stage = lock.withLock { rows.removeValue(forKey: row)?.stage }
        stage?.cancel()
    }

    private func fetch(_ request: RowRequest) {
        let fetch = FetchOperation(url: request.url, fetcher: fetcher)
        enqueue(fetch, for: request, on: fetchQueue) { pipeline, request, fetch in
            switch fetch.result {
            case .success(let data)?: pipeline.decode(data, for: request)
            case .failure(let error)?: pipeline.finish(request, with: .failure(error))
            case nil: break
            }
        }
    }

    private func decode(_ data: Data, for request: RowRequest) {
        let decoder = decoder
        let url = request.url
        queue(.decode, for: request) { try decoder.decode(data, from: url) }
    }

    private func resize(_ bitmap: Bitmap, for request: RowRequest) {
        let resizer = resizer
        queue(.resize, for: request) { try resizer.resize(bitmap) }
    }

    /// Queues the decode or the resize of `request`, which runs `work`.
    private func queue(
        _ kind: StageOperation.Kind, for request: RowRequest, work: @escaping @Sendable () throws -> Bitmap
    ) {
        let stage = StageOperation(kind, work)
        switch kind {
        case .decode:
            enqueue(stage, for: request, on: decodeQueue) { pipeline, request, decode in
                switch decode.result {
                case .success(let bitmap)?: pipeline.resize(bitmap, for: request)
                case .failure(let error)?: pipeline.finish(request, with: .failure(error))
                case nil: break
                }
            }
        case .resize:
            enqueue(stage, for: request, on: resizeQueue) { pipeline, request, resize in
                if let result = resize.result { pipeline.finish(request, with: result) }
            }
        }
    }

    /// Makes `stage` the request's current stage and queues it, unless the row has left the screen.
    ///
    /// `next` runs once the stage has finished, only if it is still the request's current stage.
    private func enqueue<Stage: Operation>(
        _ stage: Stage, for request: RowRequest, on queue: OperationQueue,
        then next: @escaping @Sendable (ImagePipeline, RowRequest, Stage) -> Void
    ) {
        // The block holds its stage, because Foundation documents no other owner while it runs,
        // and clears itself, so that no cycle keeps the stage, its request or its bitmaps (Linux
        // never clears a completion block; Apple platforms do once it begins).
        stage.completionBlock = { [weak self, weak request] in
            defer { stage.completionBlock = nil }
            guard let self, let request, self.isCurrent(stage, of: request) else { return }
            next(self, request, stage)
        }
        let replaced: Operation?? = lock.withLock {
            guard rows[request.row] === request else {
                stage.completionBlock = nil  // never queued, so the block would keep it forever
                return nil
            }
            // Priority is set before the operation joins its queue (Chapter 6).
            stage.queuePriority = request.visible ? .high : .low
            // Published and queued in one critical section: whoever reads the stage to cancel
            // it finds it in its queue. On Apple platforms cancelling an operation that is in
            // no queue finishes it at once, and adding a finished operation raises.
            let previous = request.stage
            request.stage = stage
            queue.addOperation(stage)
            return .some(previous)
        }
        guard case .some(let previous) = replaced else { return }
        previous?.cancel()  // a finished stage ignores it; a waiting stage being replaced stops
    }

    private func isCurrent(_ stage: Operation, of request: RowRequest) -> Bool {
        lock.withLock { rows[request.row] === request && request.stage === stage }
    }

    /// Delivers `result` on the main queue, unless the row left the screen before it got there.
    private func finish(_ request: RowRequest, with result: Result<Bitmap, any Error>) {
        OperationQueue.main.addOperation { [self] in
            // Checked on the main queue, where the list view calls rowLeftScreen: a row that
            // left while this waited gets nothing.
            let current = lock.withLock {
                guard rows[request.row] === request else { return false }
                rows[request.row] = nil
                return true
            }
            if current { request.deliver(result) }
        }
    }
}
