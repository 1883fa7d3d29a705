import Foundation
import Synchronization

/// An event a build step can wait for, such as a release sign-off, shaped as an operation.
///
/// Nobody adds an approval to a queue: it waits, unstarted, until `grant()` or `deny()` starts
/// it by hand. Finishing is the signal; the steps that depend on it are then released.
public final class Approval: Operation, @unchecked Sendable {  // immutable fields; `decided` is a Mutex
    /// A name for the event, used in messages.
    public let title: String

    private let decided = Mutex(false)  // guards the decision: true once granted or denied

    /// Creates an approval that has not been given yet.
    public init(_ title: String) {
        self.title = title
        super.init()
        name = title
    }

    /// Gives the approval: finishes the operation, which releases every step that waits for it.
    public func grant() {
        guard decide() else { return }
        start()
    }

    /// Refuses the approval: finishes the operation cancelled, so the waiting steps cancel.
    public func deny() {
        guard decide() else { return }
        cancel()
        start()
    }

    /// Does nothing: the approval's only job is to finish when the event arrives.
    override public func main() {}

    /// Claims the one decision this approval gets; returns false if it was already made.
    private func decide() -> Bool {
        decided.withLock { decided in
            defer { decided = true }
            return !decided
        }
    }
}
