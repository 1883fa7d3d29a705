import Foundation

/// A print shop that feeds its jobs to one press, the most urgent ready job first.
///
/// The press is an operation queue that prints one job at a time. It is not
/// first-in-first-out: whenever it is free it starts the ready job with the highest queue
/// priority. An order that must hold is therefore a dependency, never a priority.
public final class PrintShop: Sendable {
    /// The queue the shop's jobs wait on; it prints one job at a time.
    public let press: OperationQueue

    /// Creates a shop around `press`, which it limits to one job at a time.
    public init(press: OperationQueue = OperationQueue()) {
        press.name = "press"
        press.maxConcurrentOperationCount = 1
        self.press = press
    }

    /// Stops the press from starting new jobs; a job already printing runs to the end.
    public func pause() {
        press.isSuspended = true
    }

    /// Lets the press start waiting jobs again, the most urgent ready one first.
    public func resume() {
        press.isSuspended = false
    }

    /// Hands a print job to the press, configured for `urgency` and ordered after `prerequisites`.
    ///
    /// Everything is set before the job reaches the queue: a priority or quality of service
    /// changed afterwards may come too late.
    ///
    /// - Parameters:
    ///   - title: The job's name, shown as the operation's name.
    ///   - urgency: How soon the customer needs it; decides the queue priority and the
    ///     quality of service.
    ///   - prerequisites: Operations, on this press or anywhere else, that must finish first.
    ///   - work: The printing itself.
    /// - Returns: The job's operation, which later jobs may name as a prerequisite.
    @discardableResult
    public func submit(
        _ title: String,
        urgency: Urgency,
        after prerequisites: [Operation] = [],
        print work: @escaping @Sendable () -> Void
    ) -> Operation {
        let job = BlockOperation(block: work)
        job.name = title
        job.queuePriority = urgency.queuePriority
        job.qualityOfService = urgency.qualityOfService
        for prerequisite in prerequisites {
            job.addDependency(prerequisite)
        }
        press.addOperation(job)
        return job
    }
}
