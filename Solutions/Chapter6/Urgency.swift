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

    /// The queue priority that puts this job ahead of every less urgent job on the same press.
    public var queuePriority: Operation.QueuePriority {
        switch self {
        case .rush: .veryHigh
        case .express: .high
        case .standard: .normal
        case .bulk: .veryLow
        }
    }

    /// The quality of service the job's printing work runs at once the press starts it.
    ///
    /// Quality of service takes the place of the guide's thread priority: a class of work, not
    /// a number. Name the case; raw values differ between platforms.
    public var qualityOfService: QualityOfService {
        switch self {
        case .rush, .express: .userInitiated
        case .standard: .utility
        case .bulk: .background
        }
    }
}
