import Foundation

/// A reason a batch refused a piece of work.
public enum BatchError: Error, Equatable, Sendable {
    /// The batch was already handed to a queue; a piece added now could never run with it.
    case alreadySubmitted
}

/// A group of pieces of work that should count as done when every piece is done.
public final class Batch: @unchecked Sendable {  // pieces are all added before the batch is submitted
    private var pieces: [@Sendable () -> Void] = []

    /// Creates an empty batch.
    public init() {}

    /// Adds a piece of work.
    public func add(_ piece: @escaping @Sendable () -> Void) throws(BatchError) {
        pieces.append(piece)
    }

    /// Hands the batch to `queue` and returns the operation that stands for it.
    @discardableResult
    public func submit(to queue: OperationQueue) -> Operation {
        // A block operation runs a block; the first piece is the operation, and the others
        // follow on once it is done.
        let rest = pieces.dropFirst()
        let operation = BlockOperation(block: pieces.first ?? {})
        operation.completionBlock = {
            for piece in rest { piece() }
        }
        queue.addOperation(operation)
        return operation
    }
}
