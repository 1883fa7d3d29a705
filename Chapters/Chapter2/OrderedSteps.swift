import Foundation

/// A runner for steps that must happen one after another, in the order they were handed in.
///
/// Callers say how urgent each step is: a step the user is waiting for should get going sooner.
public final class OrderedSteps: Sendable {
    private let queue = OperationQueue()

    /// Creates a runner called `label`.
    public init(label: String) {
        queue.name = label
    }

    /// Runs `step` after the steps handed in before it.
    ///
    /// - Parameter priority: How urgently the caller needs the step.
    public func run(priority: Operation.QueuePriority = .normal, _ step: @escaping @Sendable () -> Void) {
        // A queue takes operations in the order they arrive; an urgent one may skip ahead a little.
        let operation = BlockOperation(block: step)
        operation.queuePriority = priority
        queue.addOperation(operation)
    }
}
