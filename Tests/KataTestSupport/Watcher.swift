import Foundation
import Synchronization
import Testing

/// Reads a value over and over on a thread of its own until it sees the final one, keeping each change.
///
/// It shares no lock with the code under test (its stop flag is a relaxed atomic), so it is a
/// reader "from any thread, at any time": it goes on until it has read the final value, so an
/// unprotected value written by the code under test is read with nothing ordering the two, a data race that
/// ThreadSanitizer reports even when the values look right (see `Tests/PLATFORM.md`, "ThreadSanitizer,
/// observed").
public final class Watcher<Value: Sendable & Equatable>: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let changes = Protected<[Value]?>(nil)  // set once, when the thread ends

    /// Starts reading `read()` on a new thread until it returns `final`, it is told to stop, or
    /// `limit` has passed.
    public init(reading read: @escaping @Sendable () -> Value, until final: Value, for limit: Duration = Bound.standard)
    {
        let deadline = ContinuousClock.now + limit
        Thread.detachNewThread { [self] in
            var seen: [Value] = []
            repeat {
                let value = read()
                if seen.last != value { seen.append(value) }
            } while seen.last != final && !stopping.load(ordering: .relaxed) && ContinuousClock.now < deadline
            changes.withValue { $0 = seen }
        }
    }

    /// Stops reading once the final value was seen, or at once if it never will be; returns
    /// every value seen, in order, without repeats.
    public func stop(isolation: isolated (any Actor)? = #isolation, finalIsDue: Bool) async -> [Value] {
        if !finalIsDue { stopping.store(true, ordering: .relaxed) }
        await waitUntil("the watching thread to stop") { changes.value != nil }
        return changes.value ?? []
    }
}
