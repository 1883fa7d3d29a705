import Dispatch
import Foundation

/// A runner for steps that must happen one after another, in the order they were handed in.
///
/// Callers say how urgent each step is: a step the user is waiting for should get going sooner.
public final class OrderedSteps: Sendable {
    private let queue: DispatchQueue

    /// Creates a runner whose steps run on a serial queue called `label`.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `step` after every step handed in before it has finished.
    ///
    /// - Parameter priority: How urgently the caller needs the step. It asks Dispatch for a
    ///   matching quality of service; it never moves the step ahead of an earlier one, because
    ///   a serial queue runs its blocks first in, first out.
    public func run(priority: Operation.QueuePriority = .normal, _ step: @escaping @Sendable () -> Void) {
        queue.async(qos: Self.qos(for: priority), execute: step)
    }

    private static func qos(for priority: Operation.QueuePriority) -> DispatchQoS {
        switch priority {
        case .veryHigh, .high: .userInitiated
        case .low, .veryLow: .utility
        default: .default
        }
    }
}
