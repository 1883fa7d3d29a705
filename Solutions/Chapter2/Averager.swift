import Foundation

/// A class that averages readings and hands out an operation per batch of readings.
///
/// It mirrors the factory in the guide's first listing: an existing object, an existing method,
/// and a small method that wraps the two into an operation for a piece of data.
public final class Averager: Sendable {
    private let observer: @Sendable ([Int]) -> Void

    /// Creates an averager; `observer` is told about each batch as the averaging starts.
    public init(observer: @escaping @Sendable ([Int]) -> Void = { _ in }) {
        self.observer = observer
    }

    /// Returns an operation that will average `readings` when a queue runs it.
    public func task(with readings: [Int]) -> InvocationOperation<Averager, [Int], Int> {
        InvocationOperation(target: self, method: Averager.average, argument: readings)
    }

    /// Returns the mean of `readings`, rounded toward zero, or 0 when there are none.
    public func average(of readings: [Int]) -> Int {
        observer(readings)
        guard !readings.isEmpty else { return 0 }
        return readings.reduce(0, +) / readings.count
    }
}
