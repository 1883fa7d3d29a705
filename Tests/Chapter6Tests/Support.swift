import Chapter6
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 6)

/// The urgencies from most to least urgent, as the lesson ranks them.
let mostUrgentFirst: [Urgency] = [.rush, .express, .standard, .bulk]

/// The queue priority the lesson's table gives each urgency.
func expectedPriority(_ urgency: Urgency) -> Operation.QueuePriority {
    switch urgency {
    case .rush: .veryHigh
    case .express: .high
    case .standard: .normal
    case .bulk: .veryLow
    }
}

/// The quality of service the lesson's table gives each urgency.
func expectedQuality(_ urgency: Urgency) -> QualityOfService {
    switch urgency {
    case .rush, .express: .userInitiated
    case .standard: .utility
    case .bulk: .background
    }
}

/// A queue priority spelled as in code, the same on every platform.
func spelled(_ priority: Operation.QueuePriority) -> String {
    switch priority {
    case .veryHigh: ".veryHigh"
    case .high: ".high"
    case .normal: ".normal"
    case .low: ".low"
    case .veryLow: ".veryLow"
    @unknown default: "an unknown priority"
    }
}

/// A quality of service spelled as in code; raw values differ between platforms, names do not.
func spelled(_ quality: QualityOfService) -> String {
    switch quality {
    case .userInteractive: ".userInteractive"
    case .userInitiated: ".userInitiated"
    case .utility: ".utility"
    case .background: ".background"
    case .default: ".default"
    @unknown default: "an unknown quality of service"
    }
}

/// A job a spec submits: its title and its urgency.
struct Job: Sendable {
    let title: String
    let urgency: Urgency
}

/// A batch of jobs in the order they reach the press.
struct Arrivals: Sendable, CustomTestStringConvertible {
    let jobs: [Job]

    /// Creates a batch whose titles number each urgency's jobs (`bulk 1`, `bulk 2`).
    init(_ urgencies: [Urgency]) {
        var seen: [String: Int] = [:]
        jobs = urgencies.map { urgency in
            let count = seen["\(urgency)", default: 0] + 1
            seen["\(urgency)"] = count
            return Job(title: "\(urgency) \(count)", urgency: urgency)
        }
    }

    /// The urgencies in the order a priority-ordered press prints them, most urgent first.
    ///
    /// Only the urgencies are fixed: the order among jobs of one urgency is not documented,
    /// so a spec compares urgencies, never titles.
    var urgencyOrder: [Urgency] {
        mostUrgentFirst.flatMap { urgency in jobs.filter { $0.urgency == urgency }.map(\.urgency) }
    }

    /// The urgency of each printed title, in printing order; titles not in the batch are left out.
    func urgencies(of printed: [String]) -> [Urgency] {
        printed.compactMap { title in jobs.first { $0.title == title }?.urgency }
    }

    var testDescription: String {
        jobs.map(\.title).joined(separator: ", ")
    }
}

/// Urgencies spelled for a message: `rush → express → bulk`.
func spelled(_ urgencies: [Urgency]) -> String {
    urgencies.map { "\($0)" }.joined(separator: " → ")
}

/// An outside supply (paper, ink) a job can wait for: an operation the spec finishes when it chooses.
///
/// A delivery has not arrived until `arrive()`, whether it still waits at the supplier (its
/// operation has not started) or is already being unloaded (its operation is executing on the
/// supplier's own queue).
final class Delivery: Sendable {
    /// How far a delivery has come when a job that needs it is handed to the press.
    enum Stage: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case atTheSupplier = "the paper has not left the supplier"
        case beingUnloaded = "the paper is already being unloaded on the supplier's own queue"
        case cancelledWhileUnloading =
            "the paper delivery was cancelled while being unloaded, and the unloading goes on"

        var testDescription: String { rawValue }
    }

    /// The operation jobs name as their prerequisite.
    let operation: Operation
    private let queue = OperationQueue()
    /// While it is being unloaded: the held operation, and what its arrival records where.
    private let unloading: (job: HeldJob, event: String, log: Recorder<String>)?

    /// Creates a delivery that records `event` when it arrives, and holds it back at the
    /// supplier, not started, until `arrive()`.
    init(_ event: String, into log: Recorder<String>) {
        let operation = BlockOperation { log.record(event) }
        operation.name = event
        self.operation = operation
        unloading = nil
        queue.isSuspended = true
        queue.addOperation(operation)
    }

    /// Creates a delivery that records `event` when it arrives, and keeps its operation
    /// executing on the supplier's queue, without holding a thread, until `arrive()`.
    private init(beingUnloaded event: String, into log: Recorder<String>) {
        // Its start is noted in a log of its own: only the arrival goes into the shop's.
        let job = HeldJob(event, log: Recorder())
        operation = job
        unloading = (job, event, log)
        queue.addOperation(job)
    }

    /// A delivery at `stage`: for `.beingUnloaded`, returns once its operation is executing;
    /// for `.cancelledWhileUnloading`, once it is executing and cancelled. Cancelling only asks an
    /// operation to stop: this one goes on executing, and finishes only at `arrive()`.
    static func at(_ stage: Stage, _ event: String, into log: Recorder<String>) async -> Delivery {
        switch stage {
        case .atTheSupplier:
            return Delivery(event, into: log)
        case .beingUnloaded, .cancelledWhileUnloading:
            let delivery = Delivery(beingUnloaded: event, into: log)
            await waitUntil("the delivery \"\(event)\" to start unloading") {
                delivery.operation.isExecuting
            }
            if stage == .cancelledWhileUnloading {
                delivery.operation.cancel()
            }
            return delivery
        }
    }

    /// Lets the delivery arrive.
    func arrive() {
        if let unloading {
            unloading.log.record(unloading.event)
            unloading.job.finish()
        } else {
            queue.isSuspended = false
        }
    }
}

/// A press queue that notes how each job was configured at the moment the shop handed it over.
final class WatchedPress: OperationQueue, @unchecked Sendable {  // adds only a locked Recorder
    /// What the press saw when a job arrived.
    struct HandOff: Sendable {
        let title: String
        let priority: String
        let quality: String
        /// The names of the operations the job already depended on.
        let dependencies: [String]
        /// The same operations by identity, since names may repeat; compared while the spec keeps them alive.
        let dependencyIDs: [ObjectIdentifier]

        /// Whether the job already depended on `operation` when the press received it.
        func dependsOn(_ operation: Operation) -> Bool {
            dependencyIDs.contains(ObjectIdentifier(operation))
        }
    }

    /// Every hand-off, in the order they happened.
    let handOffs = Recorder<HandOff>()

    override func addOperation(_ op: Operation) {
        note(op)
        super.addOperation(op)
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        ops.forEach(note)
        super.addOperations(ops, waitUntilFinished: wait)
    }

    /// The first hand-off of the job called `title`, if the press ever received it.
    func firstHandOff(of title: String) -> HandOff? {
        handOffs.all.first { $0.title == title }
    }

    private func note(_ op: Operation) {
        handOffs.record(
            HandOff(
                title: op.name ?? "(unnamed)",
                priority: spelled(op.queuePriority),
                quality: spelled(op.qualityOfService),
                dependencies: op.dependencies.map { $0.name ?? "(unnamed)" },
                dependencyIDs: op.dependencies.map(ObjectIdentifier.init)
            )
        )
    }
}

/// The quality-of-service class the calling thread runs at, where the platform reports it.
///
/// Darwin reports it (`qos_class_self()`), and there `QualityOfService`'s raw values are those
/// classes, a larger value being more urgent. Linux has no `qos_class_self()`, and
/// `Thread.current.qualityOfService` reads `.default` on every thread there, so it is nil.
func runningThreadClass() -> UInt32? {
    #if canImport(Darwin)
        qos_class_self().rawValue
    #else
        nil
    #endif
}

/// A job that occupies the press without holding a thread, until the spec lets it finish.
///
/// It is an asynchronous operation, so a spec can keep the press busy for as long as it likes
/// without starving the thread pool that every other spec needs.
final class HeldJob: Operation, @unchecked Sendable {  // `state` is only touched under `lock`
    private let lock = NSLock()
    private var state = (executing: false, finished: false)  // protected by lock
    private let log: Recorder<String>

    /// Creates a job that records `name` in `log` when the press starts it.
    init(_ name: String, log: Recorder<String>) {
        self.log = log
        super.init()
        self.name = name
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { lock.withLock { state.executing } }
    override var isFinished: Bool { lock.withLock { state.finished } }

    override func start() {
        willChangeValue(forKey: "isExecuting")
        lock.withLock { state.executing = true }
        didChangeValue(forKey: "isExecuting")
        log.record(name ?? "held job")
    }

    /// Lets the job finish, which frees the press.
    func finish() {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        lock.withLock { state = (executing: false, finished: true) }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
    }
}
