import Foundation

/// The model behind a screen that lists numbers and shows their total.
///
/// The screen calls `add(_:)` and `remove(at:)` on the main queue and redraws the total
/// whenever `onTotalChange` fires. Each change starts an `AdderOperation` on a private queue;
/// only the newest one's result reaches the screen, and always on the main queue.
public final class ListAdder: @unchecked Sendable {  // main-queue confined: state is only used on the main queue
    /// The numbers on the screen, in order.
    public private(set) var numbers: [Int]
    /// The total as the screen shows it.
    public private(set) var formattedTotal: String
    /// Whether a recalculation is under way; the screen shows a spinner while it is.
    public private(set) var isRecalculating = false
    /// Called on the main queue when a new total is shown, so that the screen can redraw it.
    public var onTotalChange: (@Sendable (String) -> Void)?
    /// Called when the model is released, as a view controller tears down its views.
    public var onRelease: (@Sendable () -> Void)?

    private let probe: @Sendable (SumEvent) -> Void
    private let queue = OperationQueue()
    private var inProgressAdder: AdderOperation?
    private var recalculations = 0

    /// Creates a model showing `numbers`; `probe` hears about every step of every recalculation.
    public init(numbers: [Int] = [], probe: @escaping @Sendable (SumEvent) -> Void = silentProbe) {
        self.numbers = numbers
        self.formattedTotal = String(numbers.reduce(0, +))
        self.probe = probe
        queue.name = "ListAdder recalculation"
    }

    deinit {
        queue.cancelAllOperations()
        onRelease?()
    }

    /// Appends `number` and recalculates the total.
    public func add(_ number: Int) {
        numbers.append(number)
        recalculateTotal()
    }

    /// Removes the number at `index` and recalculates the total.
    public func remove(at index: Int) {
        numbers.remove(at: index)
        recalculateTotal()
    }

    private func recalculateTotal() {
        // The running sum is about to be stale: stop it wasting the CPU.
        inProgressAdder?.cancel()

        recalculations += 1
        let adder = AdderOperation(numbers: numbers, run: recalculations, probe: probe)
        // The completion block runs on some background thread: hop to the main queue before
        // touching the model. Capturing `self` weakly means the operation never keeps the
        // model alive, so the model is always released where its owner lets go: on the main queue.
        adder.completionBlock = { [weak self, weak adder] in
            guard let adder else { return }
            DispatchQueue.main.async {
                self?.adderDidFinish(adder)
            }
        }
        inProgressAdder = adder
        isRecalculating = true
        queue.addOperation(adder)
    }

    private func adderDidFinish(_ adder: AdderOperation) {
        probe(.delivered(run: adder.run))
        // Only the newest recalculation may reach the screen, and only once it has finished.
        guard adder === inProgressAdder, adder.isFinished, let total = adder.formattedTotal else {
            return
        }
        inProgressAdder = nil
        isRecalculating = false
        formattedTotal = total
        onTotalChange?(total)
    }
}
