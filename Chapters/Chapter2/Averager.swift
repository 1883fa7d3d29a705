import Foundation

/// A class that averages readings and hands out an operation per batch of readings.
public final class Averager: Sendable {
    private let observer: @Sendable ([Int]) -> Void

    /// Creates an averager; `observer` is told about each batch as the averaging starts.
    public init(observer: @escaping @Sendable ([Int]) -> Void = { _ in }) {
        self.observer = observer
    }

    /// Returns an operation for averaging `readings`.
    public func task(with readings: [Int]) -> InvocationOperation<Averager, [Int], Int> {
        // Averaging is quick, so work it out here and let the operation just carry the number.
        let mean = average(of: readings)
        return InvocationOperation(target: self, method: { _ in { _ in mean } }, argument: readings)
    }

    /// Returns the mean of `readings`, rounded toward zero, or 0 when there are none.
    public func average(of readings: [Int]) -> Int {
        observer(readings)
        guard !readings.isEmpty else { return 0 }
        return readings.reduce(0, +) / readings.count
    }
}
