/// An append-only log of events recorded from any thread, in the order they happened.
public final class Recorder<Event: Sendable>: Sendable {
    private let events = Protected<[Event]>([])

    /// Creates an empty log.
    public init() {}

    /// Appends `event`.
    public func record(_ event: Event) {
        events.withValue { $0.append(event) }
    }

    /// Every event recorded so far, oldest first.
    public var all: [Event] {
        events.value
    }

    /// How many events were recorded.
    public var count: Int {
        events.withValue { $0.count }
    }

    /// Whether some recorded event satisfies `predicate`.
    public func contains(where predicate: (Event) -> Bool) -> Bool {
        all.contains(where: predicate)
    }

    /// The log as one line, such as `start returned → work began → finished`.
    public var timeline: String {
        let events = all
        return events.isEmpty ? "(nothing recorded)" : events.map { "\($0)" }.joined(separator: " → ")
    }

    /// The log as one line that ends with what never happened: `start returned → … → sentinel never ran`.
    public func lifecycle(missing: String) -> String {
        "Observed: \(timeline) → \(missing)"
    }
}

extension Recorder where Event: Equatable {
    /// Whether `event` was recorded.
    public func contains(_ event: Event) -> Bool {
        all.contains(event)
    }

    /// The position of the first `event` in the log, if it was recorded.
    public func position(of event: Event) -> Int? {
        all.firstIndex(of: event)
    }

    /// Whether `earlier` was recorded, and before `later` if `later` was recorded at all.
    public func recorded(_ earlier: Event, before later: Event) -> Bool {
        guard let first = position(of: earlier) else { return false }
        guard let second = position(of: later) else { return true }
        return first < second
    }
}
