import Foundation

/// What a build step does when a step it needs was cancelled.
public enum CancelledInputPolicy: Sendable {
    /// Cancel this step too, so that the cancellation reaches the steps that need it.
    case cancel
    /// Run anyway, without the cancelled step's output.
    case runWithout
}

/// Every step's output, kept in one place so that later steps can look it up by title.
enum BuildOutputs {
    // The lock keeps the dictionary from being corrupted, so sharing it is fine.
    nonisolated(unsafe) static var byTitle: [String: String] = [:]
    static let lock = NSLock()
}

/// One job of a build: an operation that turns the outputs of the steps it needs into its own.
public final class BuildStep: Operation, @unchecked Sendable {  // the outputs are behind a lock
    /// The step's name, unique within its plan; the key of its output in a dependent's inputs.
    public let title: String

    /// What this step does when a step it needs was cancelled.
    public let policy: CancelledInputPolicy

    private let approval: Approval?
    private let work: @Sendable ([String: String]) -> String

    /// Creates a step called `title` that runs `work` on the outputs of the steps it needs.
    public init(
        _ title: String,
        ifInputCancelled policy: CancelledInputPolicy = .cancel,
        approval: Approval? = nil,
        work: @escaping @Sendable (_ inputs: [String: String]) -> String
    ) {
        self.title = title
        self.policy = policy
        self.approval = approval
        self.work = work
        super.init()
        name = title
    }

    /// The step's output once it has run.
    public var output: String? {
        BuildOutputs.lock.withLock { BuildOutputs.byTitle[title] }
    }

    /// A step that waits for an approval is ready once the approval is granted.
    override public var isReady: Bool {
        if let approval {
            return approval.isGranted
        }
        return super.isReady
    }

    /// Looks up what the earlier steps produced and runs the work.
    override public func main() {
        var inputs: [String: String] = [:]
        BuildOutputs.lock.withLock {
            for case let step as BuildStep in dependencies {
                inputs[step.title] = BuildOutputs.byTitle[step.title]
            }
        }
        let made = work(inputs)
        BuildOutputs.lock.withLock { BuildOutputs.byTitle[title] = made }
    }
}
