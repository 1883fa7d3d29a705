import Foundation

/// The model behind a screen that lists numbers and shows their total.
///
/// The screen calls `add(_:)` and `remove(at:)` on the main queue and redraws the total
/// whenever `onTotalChange` fires. Adding up is slow, so it happens on a thread of its own.
public final class ListAdder: @unchecked Sendable {  // Only the main thread changes the list, so sharing it is fine.
    /// The numbers on the screen, in order.
    public private(set) var numbers: [Int]
    /// The total as the screen shows it.
    public private(set) var formattedTotal: String
    /// Whether a recalculation is under way; the screen shows a spinner while it is.
    public private(set) var isRecalculating = false
    /// Called when a new total is ready, so that the screen can redraw it.
    public var onTotalChange: (@Sendable (String) -> Void)?
    /// Called when the model is released, as a view controller tears down its views.
    public var onRelease: (@Sendable () -> Void)?

    private let probe: @Sendable (SumEvent) -> Void
    private var recalculations = 0

    /// Creates a model showing `numbers`; `probe` hears about every step of every recalculation.
    public init(numbers: [Int] = [], probe: @escaping @Sendable (SumEvent) -> Void = silentProbe) {
        self.numbers = numbers
        self.formattedTotal = String(numbers.reduce(0, +))
        self.probe = probe
    }

    deinit {
        onRelease?()
    }

    /// Appends `number` and recalculates the total.
    public func add(_ number: Int) {
        numbers.append(number)
        recalculateTotalUsingThread()
    }

    /// Removes the number at `index` and recalculates the total.
    public func remove(at index: Int) {
        numbers.remove(at: index)
        recalculateTotalUsingThread()
    }

    private func recalculateTotalUsingThread() {
        isRecalculating = true
        recalculations += 1
        let run = recalculations
        Thread.detachNewThread {
            self.recalculateOnThread(run: run)
        }
    }

    private func recalculateOnThread(run: Int) {
        var total = 0
        let count = numbers.count
        for index in 0..<count {
            probe(.willAdd(run: run, index: index))  // adding up is slow
            total += numbers[index]
        }
        probe(.stopped(run: run, added: count))

        // The work is done: show the result.
        formattedTotal = String(total)
        isRecalculating = false
        onTotalChange?(formattedTotal)
        probe(.delivered(run: run))
    }
}
