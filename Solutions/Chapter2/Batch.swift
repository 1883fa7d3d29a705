import Foundation
import Synchronization

/// A reason a batch refused a piece of work.
public enum BatchError: Error, Equatable, Sendable {
    /// The batch was already handed to a queue; a piece added now could never run with it.
    case alreadySubmitted
}

/// A group of independent pieces of work that counts as done only when every piece is done.
public final class Batch: Sendable {
    private struct State {
        var pieces: [@Sendable () -> Void] = []
        var submitted = false
    }

    private let state = Mutex(State())  // protected: the pieces and whether the batch was submitted

    /// Creates an empty batch.
    public init() {}

    /// Adds a piece of work; allowed only until the batch is submitted.
    ///
    /// - Throws: `BatchError.alreadySubmitted` after `submit(to:)`.
    public func add(_ piece: @escaping @Sendable () -> Void) throws(BatchError) {
        try state.withLock { state throws(BatchError) in
            guard !state.submitted else { throw .alreadySubmitted }
            state.pieces.append(piece)
        }
    }

    /// Puts every piece into one block operation, adds it to `queue` and returns it.
    ///
    /// The operation finishes only when the last of its blocks has returned.
    @discardableResult
    public func submit(to queue: OperationQueue) -> Operation {
        let pieces = state.withLock { state in
            state.submitted = true
            return state.pieces
        }
        let operation = BlockOperation()
        for piece in pieces {
            operation.addExecutionBlock(piece)
        }
        queue.addOperation(operation)
        return operation
    }
}
