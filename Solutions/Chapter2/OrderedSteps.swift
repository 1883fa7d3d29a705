import Dispatch

/// A runner for steps that must happen one after another, in the order they were handed in.
public final class OrderedSteps: Sendable {
    private let queue: DispatchQueue

    /// Creates a runner whose steps run on a serial queue called `label`.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `step` after every step handed in before it has finished.
    public func run(_ step: @escaping @Sendable () -> Void) {
        queue.async(execute: step)
    }
}
