import Foundation
import Synchronization

/// A print shop that feeds its jobs to one press.
///
/// The press prints one job at a time, so it behaves like a line at the counter:
/// first come, first served.
public final class PrintShop: Sendable {
    /// The queue the shop's jobs wait on; it prints one job at a time.
    public let press: OperationQueue
    /// Every job handed in, so that the counter can look one up when a customer asks.
    private let handedIn = Mutex<[Operation]>([])

    /// Creates a shop around `press`, which it limits to one job at a time.
    public init(press: OperationQueue = OperationQueue()) {
        press.name = "press"
        press.maxConcurrentOperationCount = 1  // one at a time means first in, first out
        self.press = press
    }

    /// Stops the press from starting new jobs.
    public func pause() {
        press.isSuspended = true
    }

    /// Lets the press start waiting jobs again.
    public func resume() {
        press.isSuspended = false
    }

    /// Hands a print job to the press.
    @discardableResult
    public func submit(
        _ title: String,
        urgency: Urgency,
        after prerequisites: [Operation] = [],
        print work: @escaping @Sendable () -> Void
    ) -> Operation {
        let job = BlockOperation(block: work)
        job.name = title
        handedIn.withLock { $0.append(job) }
        press.addOperation(job)

        // The urgency only matters once the job is printing, so it can be set
        // after the press has it.
        job.queuePriority = urgency.queuePriority
        job.qualityOfService = urgency.qualityOfService

        // The prerequisites were submitted earlier, and the press is first in, first out,
        // so they print first anyway. Moving them to the top makes doubly sure.
        for prerequisite in prerequisites {
            prerequisite.queuePriority = .veryHigh
        }
        return job
    }
}
