import Dispatch
import Foundation
import Testing

/// Keeps the main queue, and with it the main actor, busy for a spec, and says whether it still
/// was when the spec judged.
///
/// Where `MainQueue.hold(until:then:)` runs a block of the spec's once the hold ends, this one
/// only holds: a spec that waits for something while the queue is held must not see the hold
/// end first and judge code it never tested. It lasts `bound` (by default four times the
/// standard wait), and `isInForce` tells the spec whether it still lasted. Run a
/// spec that holds the main queue in an exit test: a held main actor delays every other spec of
/// the process that reports progress, whatever that spec checks.
public final class HeldMainQueue: Sendable {
    private let gate = Gate("the main queue")
    private let state = Protected<(began: Bool, gaveUp: Bool)>((false, false))

    /// Enqueues a block that keeps the main queue busy until `release()` or until `bound` passes.
    public init(for bound: Duration = Bound.standard * 4) {
        DispatchQueue.main.async { [gate, state] in
            state.withValue { $0.began = true }
            let opened = gate.wait(timeout: bound)
            state.withValue { $0.gaveUp = !opened }
        }
    }

    /// Whether the block is running now, so that nothing else runs on the main queue.
    public var isInForce: Bool {
        let (began, gaveUp) = state.value
        return began && !gaveUp && !gate.isOpen
    }

    /// Suspends until the block has begun to hold the main queue; false if it never did.
    public func begun(isolation: isolated (any Actor)? = #isolation) async -> Bool {
        await waitUntil("the main queue to be held for the spec") { state.value.began }
    }

    /// Lets the main queue go.
    public func release() {
        gate.open()
    }

    /// What a spec says when the hold ended before it judged: the machine was too slow for the
    /// bound, and the verdict would not be about the code.
    public static let endedTooSoon = """
        The spec kept the main actor busy, but the hold ended by itself before the spec could \
        judge, so this run says nothing about the code: the machine was too slow for the bound. \
        Run it again with KATA_TIME_SCALE=3.
        """
}
