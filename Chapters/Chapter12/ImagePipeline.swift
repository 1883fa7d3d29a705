import Foundation

/// Makes the thumbnails of a scrolling list: fetch, decode and resize, each stage on its own queue.
///
/// The list view calls it on the main queue, and gets every thumbnail, or the error that stopped
/// it, on the main queue. A row that leaves the screen gets nothing more.
public final class ImagePipeline: @unchecked Sendable {  // only used from the list view, on the main queue
    private let fetcher: any ImageFetcher
    private let decoder: any ImageDecoder
    private let resizer: any ImageResizer
    private let queue = OperationQueue()
    /// Every row's operation, so that it can be cancelled when the row scrolls away.
    private var operations: [Int: RowOperation] = [:]

    /// Creates a pipeline whose stages run at most `widths` at a time each.
    public init(
        fetcher: any ImageFetcher, decoder: any ImageDecoder, resizer: any ImageResizer,
        widths: StageWidths = StageWidths()
    ) {
        self.fetcher = fetcher
        self.decoder = decoder
        self.resizer = resizer
        queue.name = "images"
        // The server is the bottleneck, so the queue is as wide as the fetches it allows.
        queue.maxConcurrentOperationCount = widths.fetches
    }

    /// Asks for the thumbnail of `url` for `row`; `deliver` gets it, or the error, once, on the main queue.
    ///
    /// `visible` says whether the row is on screen now or only soon (prefetching). A new request
    /// for a row replaces the one it had: the old one delivers nothing.
    public func request(
        row: Int, url: URL, visible: Bool,
        deliver: @escaping @Sendable (Result<Bitmap, any Error>) -> Void
    ) {
        let operation = RowOperation(
            row: row, url: url, fetcher: fetcher, decoder: decoder, resizer: resizer, deliver: deliver)
        operation.queuePriority = visible ? .high : .normal
        operations[row] = operation
        queue.addOperation(operation)
    }

    /// Tells the pipeline that `row` scrolled into view: its fetch, if still waiting, goes first.
    public func rowBecameVisible(_ row: Int) {
        operations[row]?.queuePriority = .veryHigh
    }

    /// Tells the pipeline that `row` left the screen: its stages stop, and it gets nothing.
    public func rowLeftScreen(_ row: Int) {
        operations[row]?.leftScreen = true
    }
}
