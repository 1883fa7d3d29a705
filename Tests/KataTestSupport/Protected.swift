import Synchronization

/// A value shared between threads, reachable only through a lock.
public final class Protected<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>  // guards the value; never held while calling out

    /// Creates a box holding `value`.
    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { value in try body(&value) }
    }

    /// A copy of the value as it is now.
    public var value: Value {
        mutex.withLock { $0 }
    }
}
