import Foundation

/// An event a build step can wait for, such as a release sign-off.
public final class Approval: Operation, @unchecked Sendable {  // two flags, set once each
    /// A name for the event, used in messages.
    public let title: String

    var isGranted = false
    var isDenied = false

    /// Creates an approval that has not been given yet.
    public init(_ title: String) {
        self.title = title
        super.init()
        name = title
    }

    /// Gives the approval; the waiting step sees it the next time the queue asks `isReady`.
    public func grant() {
        isGranted = true
    }

    /// Refuses the approval; the waiting step never becomes ready.
    public func deny() {
        isDenied = true
    }
}
