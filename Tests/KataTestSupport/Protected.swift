import Foundation

/// A value shared between threads, reachable only through a lock.
public final class Protected<Value: Sendable>: @unchecked Sendable {  // `stored` is only touched under `lock`
    private let lock = NSLock()
    private var stored: Value  // protected by lock; never held while calling out

    /// Creates a box holding `value`.
    public init(_ value: Value) {
        stored = value
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&stored) }
    }

    /// A copy of the value as it is now.
    public var value: Value {
        lock.withLock { stored }
    }
}
