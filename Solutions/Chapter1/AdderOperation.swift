import Foundation

/// Adds up a fixed list of numbers on a queue's thread and formats the total for the screen.
///
/// Every property has a thread-safety strategy:
/// - `numbers`, `run` and the probe are immutable: `init` sets them, nobody changes them.
/// - The formatter is thread-confined: `main()` creates it and only its thread uses it.
/// - `total` and `formattedTotal` are serially confined: `main()` writes them once, at the
///   end, and they mean something only after `isFinished`; the lock makes even an early read
///   safe from any thread (it sees `nil`).
public final class AdderOperation: Operation, @unchecked Sendable {  // `result` is locked; the rest is immutable
    /// The numbers to add up: the operation's own copy, taken when it was created.
    public let numbers: [Int]
    /// Which recalculation of the list this is, counting from 1.
    public let run: Int

    private let probe: @Sendable (SumEvent) -> Void
    // NSLock, not Mutex: ThreadSanitizer on Linux can take a contended Mutex for a race.
    private let lock = NSLock()
    private var result: (total: Int, formatted: String)?  // protected by lock; written once, by main()

    /// Creates an operation that adds up `numbers` for recalculation `run`.
    public init(numbers: [Int], run: Int = 1, probe: @escaping @Sendable (SumEvent) -> Void = silentProbe) {
        self.numbers = numbers
        self.run = run
        self.probe = probe
        super.init()
    }

    /// The total, or `nil` until the operation has finished without being cancelled.
    public var total: Int? {
        lock.withLock { result?.total }
    }

    /// The total formatted for the screen, or `nil` until the operation has finished.
    public var formattedTotal: String? {
        lock.withLock { result?.formatted }
    }

    public override func main() {
        var total = 0
        var added = 0
        for (index, number) in numbers.enumerated() {
            if isCancelled { break }
            probe(.willAdd(run: run, index: index))
            total += number
            added += 1
        }
        probe(.stopped(run: run, added: added))
        guard added == numbers.count else { return }  // cancelled part-way: there is no total

        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        let formatted = formatter.string(from: total as NSNumber) ?? String(total)
        lock.withLock { result = (total, formatted) }
    }
}
