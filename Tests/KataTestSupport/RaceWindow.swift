import Foundation

/// Opens the window between a check and the act that follows it, so that a race a learner's
/// code has shows in every run instead of once in thousands.
///
/// The operation under test calls `checked()` from its getters whenever the value it returns
/// says "not finished yet". `race(_:against:)` runs `first` on a thread of its own; the first such
/// check on that thread lets `rival` run to its end before `first` goes on. Code that checks and
/// acts in one critical section keeps `rival` waiting at its lock, and `first` goes on after a
/// short bound; code that never checks through the getters has `rival` run after it.
public final class RaceWindow: Sendable {
    /// Marks, in its thread dictionary, the thread whose check lets the rival in.
    private static let key = "OperationKata.racer"
    private let rival = Protected<(@Sendable () -> Void)?>(nil)

    public init() {}

    /// Runs `first` on a new thread and `rival` in the middle of it, at its first check.
    public func race(_ first: @escaping @Sendable () -> Void, against rival: @escaping @Sendable () -> Void) {
        self.rival.withValue { $0 = rival }
        Thread.detachNewThread { [self] in
            Thread.current.threadDictionary[Self.key] = true
            first()
            Thread.current.threadDictionary[Self.key] = nil
            self.rival.withValue { $0.take() }?()
        }
    }

    /// Called by a getter that is about to answer "not finished yet": on the racing thread, the
    /// first call lets the rival run, and returns once it has returned or after a short bound.
    public func checked() {
        guard Thread.current.threadDictionary[Self.key] != nil,
            let rival = rival.withValue({ $0.take() })
        else { return }
        let returned = Gate("the rival call to return")
        Thread.detachNewThread {
            rival()
            returned.open()
        }
        returned.wait(timeout: Bound.scaled(.milliseconds(50)))
    }
}
