import Dispatch
import Testing

/// Questions about the main queue that have the same answer on Linux and on Darwin.
///
/// `Thread.isMainThread` cannot tell: under `swift test` on Linux, worker threads drain the
/// main queue. A queue-specific value set on the main queue can.
public enum MainQueue {
    private static let key = DispatchSpecificKey<Bool>()
    private static let marked: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()

    /// Whether the calling code is running on the main queue; the first call marks the queue.
    public static var isCurrent: Bool {
        _ = marked
        return DispatchQueue.getSpecific(key: key) ?? false
    }

    /// Runs `body` on the main queue and suspends until it has run.
    ///
    /// - Parameter description: What the wait is for, as its failure names it.
    /// - Returns: Whether it ran within the bound.
    @discardableResult
    public static func run(
        _ description: String,
        isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping @Sendable () -> Void
    ) async -> Bool {
        let done = Protected(false)
        DispatchQueue.main.async {
            body()
            done.withValue { $0 = true }
        }
        return await waitUntil(description, sourceLocation: sourceLocation) { done.value }
    }

    /// Enqueues `body` to run on the main queue once `gate` opens, and keeps the main queue busy
    /// until then (a bounded time at most).
    ///
    /// Whatever code under test enqueues on the main queue in the meantime runs after `body`: a
    /// spec uses this to act in the same turn of the main queue before a result already on its
    /// way gets there. The hold lasts three times `Bound.standard`, longer than any wait a spec
    /// makes while it holds, so that the spec's wait runs out first; before it judges, a spec
    /// asks the returned hold whether it was still in force (`Hold.gaveUp`).
    ///
    /// A spec that holds the main queue holds it for the whole process: it runs in an exit test
    /// or in a chapter whose suites run one at a time, so that no other spec waits behind it.
    @discardableResult
    public static func hold(until gate: Gate, then body: @escaping @Sendable () -> Void) -> Hold {
        let hold = Hold()
        DispatchQueue.main.async {
            let opened = gate.wait(timeout: Bound.standard * 3)
            hold.state.withValue { $0 = opened ? .released : .gaveUp }
            body()
        }
        return hold
    }

    /// A hold of the main queue, as `hold(until:then:)` made it.
    public final class Hold: Sendable {
        enum State { case waiting, released, gaveUp }
        let state = Protected(State.waiting)

        /// Whether the hold ran out before its gate opened: the main queue was then free while
        /// the spec thought it held, and what the spec saw proves nothing.
        public var gaveUp: Bool { state.value == .gaveUp }
    }

    /// Suspends until the main queue has run everything enqueued before this call.
    ///
    /// - Returns: Whether it did so within the bound.
    @discardableResult
    public static func drain(
        isolation: isolated (any Actor)? = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Bool {
        await run("the main queue to run the blocks enqueued on it", sourceLocation: sourceLocation) {}
    }
}
