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
        guard !isCancelled else { return }
        let sections = sectionNames.map { source.load($0, of: title) }
        result.withLock { $0 = Report(title: title, sections: sections) }
    }
}

/// An operation that combines finished reports into one digest.
public final class DigestJob: Operation, @unchecked Sendable {  // mutable state sits in `result`, a Mutex
    /// The digest's title.
    public let title: String
    private let parts: [ReportJob]
    private let result = Mutex<Report?>(nil)

    /// Creates a digest called `title` of `parts`; it builds the parts itself when it runs.
    public init(title: String, parts: [ReportJob]) {
        self.title = title
        self.parts = parts
        super.init()
    }

    /// The finished digest; nil until the job has finished, and if it was cancelled.
    public var report: Report? {
        result.withLock { $0 }
    }

    override public func main() {
        guard !isCancelled else { return }
        // Build every part on the ledger queue too, and wait here until they are all done.
        OperationQueue.current?.addOperations(parts, waitUntilFinished: true)
        let sections = parts.flatMap { $0.report?.sections ?? [] }
        result.withLock { $0 = Report(title: title, sections: sections) }
    }
}
