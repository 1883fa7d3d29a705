import Chapter9
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 9)

/// How long a scenario waits for what correct code does within milliseconds.
let patience = Bound.scaled(.milliseconds(500))

/// A ledger that makes up each section it is asked for and remembers every one, weakly.
///
/// Loads of the reports named in `holding` wait until the spec releases that report, without
/// any other report being held; every other load answers at once.
final class Ledger: SectionSource {
    private struct Handed: Sendable {
        let report: String
        weak var section: Section?
    }
    private let handedOut = Protected<[Handed]>([])
    private let gates: [String: Gate]
    /// Every load, as `report/section`, in the order they began.
    let loads = Recorder<String>()
    /// The queue each load ran on, in the same order.
    private let queues = Recorder<ObjectIdentifier?>()

    /// Creates a ledger that holds the loads of the reports named in `holding`.
    init(holding: [String] = []) {
        gates = Dictionary(uniqueKeysWithValues: holding.map { ($0, Gate("loads of \($0)")) })
    }

    func load(_ name: String, of report: String) -> Section {
        loads.record("\(report)/\(name)")
        queues.record(OperationQueue.current.map(ObjectIdentifier.init))
        gates[report]?.wait(timeout: patience * 2)
        let section = Section(name: name, report: report, rows: ["\(report) \(name)"])
        handedOut.withValue { $0.append(Handed(report: report, section: section)) }
        return section
    }

    /// Lets the loads of `report` finish.
    func release(_ report: String) {
        gates[report]?.open()
    }

    /// The loads that ran anywhere but on `queue`.
    func loads(awayFrom queue: OperationQueue) -> [String] {
        zip(loads.all, queues.all).filter { $0.1 != ObjectIdentifier(queue) }.map(\.0)
    }

    /// How many loads of `report` have begun.
    func loadCount(of report: String) -> Int {
        loads.all.filter { $0.hasPrefix("\(report)/") }.count
    }

    /// The reports that still have a section in memory, each named once, in order.
    var reportsInMemory: [String] {
        var seen: [String] = []
        for handed in handedOut.value where handed.section != nil && !seen.contains(handed.report) {
            seen.append(handed.report)
        }
        return seen
    }
}

/// Operations a spec watches without keeping them alive.
final class Watch: Sendable {
    private struct Watched: Sendable {
        let name: String
        weak var operation: Operation?
    }
    private let watched = Protected<[Watched]>([])

    /// Starts watching `operation`, called `name` in messages.
    func add(_ operation: Operation, as name: String) {
        watched.withValue { $0.append(Watched(name: name, operation: operation)) }
    }

    /// The names of the watched operations that are still in memory.
    var alive: [String] {
        watched.value.filter { $0.operation != nil }.map(\.name)
    }
}

/// Stands for whoever asked for a report (a screen, a view model): a deliver closure holds it,
/// as an app's closure would hold its `self`.
final class Caller: Sendable {
    /// The caller's name in messages.
    let name: String

    init(_ name: String) {
        self.name = name
    }

    /// A deliver closure that holds this caller and records the report's title.
    func deliver(into recorder: Recorder<String>) -> @Sendable (Report) -> Void {
        { [self] report in
            withExtendedLifetime(self) { recorder.record(report.title) }
        }
    }
}

/// Callers a spec watches without keeping them alive.
final class CallerWatch: Sendable {
    private let watched = Protected<[WeakReference<Caller>]>([])

    /// Starts watching `caller`.
    func add(_ caller: Caller) {
        watched.withValue { $0.append(WeakReference(caller)) }
    }

    /// How many callers were watched in all.
    var count: Int { watched.value.count }

    /// The names of the watched callers that are still in memory.
    var alive: [String] {
        watched.value.compactMap { $0.value?.name }
    }
}

/// Asks `generator` for a digest from a thread of its own and waits, within a bound, for the job.
///
/// A `digest` that waits for its parts would otherwise hold one of the few threads every async
/// spec of the run shares, and for good while the ledger's queue is suspended: the whole run
/// would stop, instead of this one spec failing and saying why. The spec lets the queue go on
/// when it returns, which lets such a call end.
///
/// - Returns: The digest's job, or nil (with an issue recorded) if `digest` did not return.
func digestOnItsOwnThread(
    _ generator: ReportGenerator,
    _ title: String,
    of parts: [String],
    sections: [String],
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    then deliver: @escaping @Sendable (Report) -> Void
) async -> DigestJob? {
    // The job is taken out of the box once it is back, so that the thread, however long it takes
    // to end, keeps nothing a spec expects to be freed.
    let box = Protected<DigestJob?>(nil)
    let returned: Void? = await callOnItsOwnThread(
        "digest(\"\(title)\", of: \(parts)) on a suspended queue",
        hint: """
            digest hands the digest and its parts to the queue and returns the job at once; it \
            never waits for them, so it returns even while the queue cannot run anything yet.
            \(lesson.see("Waiting inside a queue"))
            """,
        sourceLocation: sourceLocation
    ) {
        let job = generator.digest(title, of: parts, sections: sections, then: deliver)
        box.withValue { $0 = job }
    }
    guard returned != nil else { return nil }
    return box.withValue { box in
        defer { box = nil }
        return box
    }
}
