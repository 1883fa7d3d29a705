import Foundation

/// Adds up a list of numbers as an operation, so that a queue can run it.
///
/// A first port of the thread code: `ListAdder` does not use it yet.
public final class AdderOperation: Operation, @unchecked Sendable {  // one thread runs main(): no lock needed
    /// The numbers to add up.
    public let numbers: [Int]
    /// Which recalculation of the list this is, counting from 1.
    public let run: Int
    /// The total so far.
    public private(set) var total: Int?
    /// The total so far, formatted for the screen.
    public private(set) var formattedTotal: String?

    private let probe: @Sendable (SumEvent) -> Void

    /// Creates an operation that adds up `numbers` for recalculation `run`.
    public init(numbers: [Int], run: Int = 1, probe: @escaping @Sendable (SumEvent) -> Void = silentProbe) {
        self.numbers = numbers
        self.run = run
        self.probe = probe
        super.init()
    }

    public override func main() {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        var runningTotal = 0
        for (index, number) in numbers.enumerated() {
            probe(.willAdd(run: run, index: index))
            runningTotal += number
            // Keep the screen's numbers fresh while we go.
            total = runningTotal
            formattedTotal = formatter.string(from: runningTotal as NSNumber)
        }
        probe(.stopped(run: run, added: numbers.count))
    }
}
