import Foundation
import Synchronization

/// What a build step does when a step it needs was cancelled.
public enum CancelledInputPolicy: Sendable {
    /// Cancel this step too, so that the cancellation reaches the steps that need it.
    case cancel
    /// Run anyway, without the cancelled step's output.
    case runWithout
}

/// One job of a build: an operation that turns the outputs of the steps it needs into its own.
///
/// A step reads its inputs from its dependencies, the operation objects themselves, when it
/// starts; by then every one of them has finished, so their outputs are final.
public final class BuildStep: Operation, @unchecked Sendable {  // immutable fields; `result` is a Mutex
    /// The step's name, unique within its plan; the key of its output in a dependent's inputs.
    public let title: String

    /// What this step does when a step it needs was cancelled.
    public let policy: CancelledInputPolicy

    private let work: @Sendable ([String: String]) -> String
    private let result = Mutex<String?>(nil)  // guards the output; written once, by main

    /// Creates a step called `title` that runs `work` on the outputs of the steps it needs.
    ///
    /// - Parameters:
    ///   - title: The step's name; a dependent finds this step's output under it.
    ///   - policy: What to do if a step this one needs was cancelled.
    ///   - approval: An event the step must also wait for, such as a sign-off.
    ///   - work: Computes the step's output from its inputs, keyed by the title of each step.
    public init(
        _ title: String,
        ifInputCancelled policy: CancelledInputPolicy = .cancel,
        approval: Approval? = nil,
        work: @escaping @Sendable (_ inputs: [String: String]) -> String
    ) {
        self.title = title
        self.policy = policy
        self.work = work
        super.init()
        name = title
        // Waiting for an event is just one more dependency, wired before anyone enqueues us.
        if let approval { addDependency(approval) }
    }

    /// The step's output once it has run; nil before that, and for good if it was cancelled.
    public var output: String? {
        result.withLock { $0 }
    }

    /// Gathers the inputs from the finished dependencies, decides about cancelled ones, runs the work.
    override public func main() {
        guard !isCancelled else { return }
        var inputs: [String: String] = [:]
        for dependency in dependencies {
            if dependency.isCancelled {
                // A denied approval always stops the step; a cancelled input follows the policy.
                if dependency is Approval || policy == .cancel {
                    cancel()
                    return
                }
                continue
            }
            if let step = dependency as? BuildStep, let output = step.output {
                inputs[step.title] = output
            }
        }
        let made = work(inputs)
        result.withLock { $0 = made }
    }
}
