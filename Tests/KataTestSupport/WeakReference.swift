import Foundation

/// A weak reference that concurrent code may share: for specs that check an object is gone, or
/// that look at it only while someone else keeps it alive.
public final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    // The lock guards `object`, which a spec reads from several threads while Swift clears it.
    private let lock = NSLock()
    private weak var object: Object?

    public init(_ object: Object?) {
        self.object = object
    }

    /// The object, or nil once nothing else holds it.
    public var value: Object? {
        lock.withLock { object }
    }
}
