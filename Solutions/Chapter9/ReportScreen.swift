import Foundation

/// The screen that shows the newest report; use it only on the main queue.
public final class ReportScreen: @unchecked Sendable {  // `shown` is only touched on the main queue
    private let generator: ReportGenerator
    private let display: @Sendable (Report) -> Void
    private var shown: Report?  // main queue only
    /// The newest refresh's job: a queue promises no order between two jobs, so an older report
    /// that ends later must not replace a newer one.
    private var newest: ObjectIdentifier?  // main queue only

    /// Creates a screen that asks `generator` for reports and passes each to `display` to draw.
    public init(generator: ReportGenerator, display: @escaping @Sendable (Report) -> Void) {
        self.generator = generator
        self.display = display
    }

    /// The report on the screen now; read it on the main queue.
    public var current: Report? { shown }

    /// Asks for report `title` and shows it once it is ready; call it on the main queue.
    ///
    /// It returns at once: the report appears later, from the main queue.
    public func refresh(_ title: String, sections: [String]) {
        let job = ReportJob(title: title, sections: sections, source: generator.source)
        newest = ObjectIdentifier(job)
        let display = BlockOperation { [self] in
            if let report = job.report, newest == ObjectIdentifier(job) { self.show(report) }
        }
        display.addDependency(job)
        generator.queue.addOperation(job)
        // Never wait here: `display` needs the main queue, and this code is running on it.
        OperationQueue.main.addOperation(display)
    }

    private func show(_ report: Report) {
        shown = report
        display(report)
    }
}
