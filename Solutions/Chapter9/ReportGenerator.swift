import Foundation
import Synchronization

/// Builds reports from a ledger, one at a time, and delivers them on the main queue.
public final class ReportGenerator: Sendable {
    /// The queue reports are built on: one at a time, because the ledger takes one connection.
    public let queue: OperationQueue
    /// Where the sections come from.
    public let source: any SectionSource
    /// The newest job, so that the next one can wait for it; weak, so a finished job can go.
    private let latest = Mutex(Latest())

    private struct Latest {
        weak var job: ReportJob?
    }

    /// Creates a generator that loads sections from `source`.
    public init(source: any SectionSource) {
        let queue = OperationQueue()
        queue.name = "ledger"
        queue.maxConcurrentOperationCount = 1
        self.queue = queue
        self.source = source
    }

    /// Builds report `title` from `sections` and calls `deliver` with it on the main queue.
    ///
    /// Reports are built in the order they were asked for.
    @discardableResult
    public func generate(
        _ title: String, sections: [String], then deliver: @escaping @Sendable (Report) -> Void
    ) -> ReportJob {
        let job = ReportJob(title: title, sections: sections, source: source)
        job.completionBlock = {
            // The block holds its job, because Foundation documents no other owner while it runs,
            // and clears itself at the end to break the cycle (Apple's Foundation does that too).
            if let report = job.report {
                OperationQueue.main.addOperation { deliver(report) }
            }
            // A job cancelled before it ran never ran main(), where it lets go of what it
            // waited for: this block runs on every exit, so let go here too.
            job.dependencies.filter(\.isFinished).forEach(job.removeDependency)
            job.completionBlock = nil
        }
        latest.withLock { latest in
            if let previous = latest.job { job.addDependency(previous) }
            latest.job = job
        }
        queue.addOperation(job)
        return job
    }

    /// Builds a report for each of `parts`, then one digest of all their sections, delivered on the main queue.
    @discardableResult
    public func digest(
        _ title: String, of parts: [String], sections: [String],
        then deliver: @escaping @Sendable (Report) -> Void
    ) -> DigestJob {
        let jobs = parts.map { ReportJob(title: $0, sections: sections, source: source) }
        let digest = DigestJob(title: title, parts: jobs)
        digest.completionBlock = {
            if let report = digest.report {
                OperationQueue.main.addOperation { deliver(report) }
            }
            // A digest cancelled before it ran never ran main(): let go of its parts here.
            digest.dependencies.filter(\.isFinished).forEach(digest.removeDependency)
            digest.completionBlock = nil
        }
        // The digest depends on its parts, so the queue runs them first; nobody waits.
        queue.addOperations(jobs + [digest], waitUntilFinished: false)
        return digest
    }

    /// Builds `job`'s report again, with fresh sections, and delivers it on the main queue.
    ///
    /// An operation runs only once: this makes a new job with the same inputs.
    @discardableResult
    public func regenerate(
        _ job: ReportJob, then deliver: @escaping @Sendable (Report) -> Void
    ) -> ReportJob {
        generate(job.title, sections: job.sectionNames, then: deliver)
    }

    /// Calls `done` once every report asked for before this call has been built.
    ///
    /// Reports asked for later are not waited for, and no thread blocks meanwhile.
    public func flush(then done: @escaping @Sendable () -> Void) {
        queue.addBarrierBlock(done)
    }
}
