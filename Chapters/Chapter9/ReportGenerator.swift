import Foundation
import Synchronization

/// Builds reports from a ledger, one at a time, and delivers them on the main queue.
public final class ReportGenerator: Sendable {
    /// The queue reports are built on: one at a time, because the ledger takes one connection.
    public let queue: OperationQueue
    /// Where the sections come from.
    public let source: any SectionSource
    /// The newest job, so that the next one can wait for it: one chain for all the app's
    /// reports, so that they come out in the order they were asked for.
    private static let latest = Mutex<ReportJob?>(nil)

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
            guard let report = job.report else { return }
            OperationQueue.main.addOperation { deliver(report) }
        }
        Self.latest.withLock { latest in
            if let previous = latest { job.addDependency(previous) }
            latest = job
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
            guard let report = digest.report else { return }
            OperationQueue.main.addOperation { deliver(report) }
        }
        queue.addOperation(digest)
        return digest
    }

    /// Builds `job`'s report again, with fresh sections, and delivers it on the main queue.
    @discardableResult
    public func regenerate(
        _ job: ReportJob, then deliver: @escaping @Sendable (Report) -> Void
    ) -> ReportJob {
        // The job still knows its title, sections and source: run it once more.
        job.completionBlock = {
            guard let report = job.report else { return }
            OperationQueue.main.addOperation { deliver(report) }
        }
        queue.addOperation(job)
        return job
    }

    /// Calls `done` once every report asked for before this call has been built.
    public func flush(then done: @escaping @Sendable () -> Void) {
        queue.addOperation { [queue] in
            queue.waitUntilAllOperationsAreFinished()
            done()
        }
    }
}
