import Foundation

/// A one-shot barrier: code under test waits at it until the spec opens it.
///
/// A waiter gives up after a bounded time, so a spec that fails never hangs the test process.
public final class Gate: @unchecked Sendable {  // its state is only touched under `condition`
    /// A name used in failure messages.
    public let name: String
    private let condition = NSCondition()
    private var isOpenNow = false  // protected by condition
    private var waiterGaveUp = false  // protected by condition

    /// Creates a closed gate called `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// Opens the gate for every current and future waiter.
    public func open() {
        condition.withLock {
            isOpenNow = true
            condition.broadcast()
        }
    }

    /// Whether the gate has been opened.
    public var isOpen: Bool {
        condition.withLock { isOpenNow }
    }

    /// Whether a waiter gave up before the gate opened. A spec that holds work at a gate asks it
    /// before it judges: a hold that ran out let the work go on while the spec thought it held,
    /// so what the spec saw afterwards proves nothing.
    public var gaveUp: Bool {
        condition.withLock { waiterGaveUp }
    }

    /// Blocks until the gate opens or `timeout` passes; returns whether it opened.
    @discardableResult
    public func wait(timeout: Duration = Bound.standard) -> Bool {
        let deadline = Date.now.addingTimeInterval(timeout.timeInterval)
        return condition.withLock {
            while !isOpenNow {
                if !condition.wait(until: deadline) {
                    if !isOpenNow { waiterGaveUp = true }
                    return isOpenNow
                }
            }
            return true
        }
    }
}

/// A turnstile that lets a counted number of steps through, one `allow` at a time.
///
/// Code under test calls `step()` where it would pause (before each number it adds, say);
/// the spec decides how far the work may go, so interleavings do not depend on timing.
public final class Pacer: @unchecked Sendable {  // `state` is only touched under `condition`
    private let condition = NSCondition()
    private var state = (arrivals: 0, allowed: 0, released: false)  // protected by condition

    /// Creates a pacer that lets no step through yet.
    public init() {}

    /// Lets `count` more steps through.
    public func allow(_ count: Int = 1) {
        condition.withLock {
            state.allowed += count
            condition.broadcast()
        }
    }

    /// Lets every step through from now on.
    public func releaseAll() {
        condition.withLock {
            state.released = true
            condition.broadcast()
        }
    }

    /// How many steps have arrived, whether or not they went through.
    public var arrivals: Int {
        condition.withLock { state.arrivals }
    }

    /// Arrives at the turnstile and blocks until this step is allowed or `timeout` passes.
    ///
    /// - Returns: Whether the step was allowed; false means the spec never let it through.
    @discardableResult
    public func step(timeout: Duration = Bound.standard) -> Bool {
        let deadline = Date.now.addingTimeInterval(timeout.timeInterval)
        return condition.withLock {
            state.arrivals += 1
            let ticket = state.arrivals
            while !state.released && state.allowed < ticket {
                if !condition.wait(until: deadline) { return state.released || state.allowed >= ticket }
            }
            return true
        }
    }
}

extension Duration {
    /// The duration in seconds, as Foundation's time intervals count them.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
