import Foundation

/// What became of one photo: still waiting, copied, or cancelled before it was copied.
public enum ImportOutcome: Equatable, Sendable {
    /// The import has not finished yet.
    case pending
    /// The photo was copied; `bytes` says how large it was.
    case imported(bytes: Int)
    /// The import was cancelled and copied nothing worth keeping.
    case cancelled
}

/// A place photos are copied from, such as a camera card.
public protocol PhotoSource: Sendable {
    /// Starts copying `photo` and calls `done` with its size once the copy is complete, from any thread.
    func copy(_ photo: String, done: @escaping @Sendable (Int) -> Void)
}

/// An asynchronous operation that copies one photo from a source and keeps the outcome.
///
/// It stays executing until the source reports the copy complete, so a slow card does not
/// hold a thread while it works.
public final class PhotoImport: Operation, @unchecked Sendable {  // `state` is only touched under `lock`
    /// The photo this operation imports.
    public let photo: String
    private let source: any PhotoSource
    private let lock = NSLock()
    private var state = (executing: false, finished: false, outcome: ImportOutcome.pending)  // protected by lock

    /// Creates an import of `photo` from `source`; nothing happens until a queue starts it.
    public init(photo: String, source: any PhotoSource) {
        self.photo = photo
        self.source = source
        super.init()
    }

    /// What became of the photo; `.pending` until the operation has finished.
    public var outcome: ImportOutcome {
        lock.withLock { state.outcome }
    }

    override public var isAsynchronous: Bool { true }
    override public var isExecuting: Bool { lock.withLock { state.executing } }
    override public var isFinished: Bool { lock.withLock { state.finished } }

    /// Starts the copy, or finishes at once if the import was cancelled before it began.
    override public func start() {
        // A queue starts cancelled operations too, precisely so that they can finish.
        if isCancelled {
            finish(.cancelled)
            return
        }
        willChangeValue(forKey: "isExecuting")
        lock.withLock { state.executing = true }
        didChangeValue(forKey: "isExecuting")
        source.copy(photo) { [self] bytes in
            finish(isCancelled ? .cancelled : .imported(bytes: bytes))
        }
    }

    private func finish(_ outcome: ImportOutcome) {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        lock.withLock { state = (executing: false, finished: true, outcome: outcome) }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
    }
}
