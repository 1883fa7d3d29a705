import Foundation

/// A runner for steps that must happen one after another, in the order they were handed in.
public final class OrderedSteps: Sendable {
    private let queue = OperationQueue()

    /// Creates a runner called `label`.
    public init(label: String) {
        queue.name = label
    }

    /// Runs `step` after the steps handed in before it.
    public func run(_ step: @escaping @Sendable () -> Void) {
        // A queue takes things in the order they arrive.
        queue.addOperation(step)
    }
}
