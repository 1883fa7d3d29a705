import Foundation

/// An operation that makes one thumbnail with Swift async work.
///
/// `main()` cannot `await`, so it hands the work to a `Task`. The queue should wait for it…
/// shouldn't it?
open class ThumbnailOperation: Operation, @unchecked Sendable {  // the Task owns the work, so this is fine (?)
    /// The name of the picture to shrink.
    public let imageName: String
    /// The width of the thumbnail, in pixels.
    public let width: Int
    private let loader: any ThumbnailLoader
    private let lock = NSLock()
    private var outcome: Result<Thumbnail, any Error>?
    private var task: Task<Void, Never>?

    /// Creates an operation that will fetch `imageName` with `loader` and shrink it to `width` pixels.
    public init(imageName: String, width: Int, loader: any ThumbnailLoader) {
        self.imageName = imageName
        self.width = width
        self.loader = loader
        super.init()
    }

    /// The thumbnail, or the error that stopped the work; nil until the operation finished.
    public var result: Result<Thumbnail, any Error>? {
        lock.withLock { outcome }
    }

    /// Runs the work. Operation calls this from start() and marks us finished when it returns.
    open override func main() {
        guard !isCancelled else { return }
        // Can't await here, so let a Task do it. (A semaphore wait would block a worker thread.)
        let task = Task { [imageName, width, loader] in
            guard let picture = try? await loader.fetch(imageName),
                let thumbnail = try? await loader.resize(picture, to: width)
            else { return }  // nothing to show
            self.finish(with: .success(thumbnail))
        }
        lock.withLock { self.task = task }
    }

    /// Stores the outcome of the work.
    public func finish(with outcome: Result<Thumbnail, any Error>) {
        lock.withLock { self.outcome = outcome }
    }
}
