import Foundation

/// How soon a customer needs a print job, from a rush order to bulk work for a quiet hour.
public enum Urgency: CaseIterable, Sendable {
    /// The customer is waiting at the counter.
    case rush
    /// Promised for later today.
    case express
    /// Promised for the usual turnaround.
    case standard
    /// Filler work for whenever the press is idle.
    case bulk

    /// The queue priority of a job at this urgency.
    public var queuePriority: Operation.QueuePriority {
        // The press prints one job at a time, in the order the jobs arrive,
        // so a queue priority could not change anything: every job keeps the default.
        .normal
    }

    /// How fast the thread printing a job at this urgency should run.
    public var qualityOfService: QualityOfService {
        // The guide gives urgent work a higher thread priority (0.0 to 1.0), but
        // `threadPriority` does not exist here, so every job keeps the default.
        .default
    }
}
