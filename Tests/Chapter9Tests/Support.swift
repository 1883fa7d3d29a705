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
