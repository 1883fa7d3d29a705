import Foundation
import Synchronization

/// An operation that loads a report's sections and keeps the finished report.
public final class ReportJob: Operation, @unchecked Sendable {  // mutable state sits in `result`, a Mutex
    /// The report's title.
    public let title: String
    /// The names of the sections to load, in order.
    public let sectionNames: [String]
    private let source: any SectionSource
    private let result = Mutex<Report?>(nil)

    /// Creates a job that builds report `title` from `sections` of `source`; nothing runs until a queue starts it.
    public init(title: String, sections: [String], source: any SectionSource) {
        self.title = title
        self.sectionNames = sections
        self.source = source
        super.init()
    }

    /// The finished report; nil until the job has finished, and if it was cancelled.
    public var report: Report? {
        result.withLock { $0 }
    }

    override public func main() {
        // Whatever this job waited for has finished: let go of it, or every earlier job stays alive.
        dependencies.forEach(removeDependency)
        guard !isCancelled else { return }
        let sections = sectionNames.map { source.load($0, of: title) }
        result.withLock { $0 = Report(title: title, sections: sections) }
    }
}

/// An operation that combines finished reports into one digest.
public final class DigestJob: Operation, @unchecked Sendable {  // mutable state sits in `result`, a Mutex
    /// The digest's title.
    public let title: String
    /// The parts, by identity, in the order they were asked for: `dependencies` promises no
    /// order, and keeping the parts themselves would keep them alive.
    private let order: [ObjectIdentifier]
    private let result = Mutex<Report?>(nil)

    /// Creates a digest called `title` of `parts`; it runs once every part has finished.
    ///
    /// The parts are its dependencies: enqueue them with the digest, and nothing waits.
    public init(title: String, parts: [ReportJob]) {
        self.title = title
        order = parts.map(ObjectIdentifier.init)
        super.init()
        parts.forEach(addDependency)
    }

    /// The finished digest; nil until the job has finished, and if it was cancelled.
    public var report: Report? {
        result.withLock { $0 }
    }

    override public func main() {
        // Every part has finished by now: read their reports in the order asked for, then let the parts go.
        let finished = dependencies
        let parts = order.compactMap { part in finished.first { ObjectIdentifier($0) == part } as? ReportJob }
        dependencies.forEach(removeDependency)
        guard !isCancelled else { return }
        let sections = parts.flatMap { $0.report?.sections ?? [] }
        result.withLock { $0 = Report(title: title, sections: sections) }
    }
}
