import Chapter5
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages send the learner.
let lesson = Lesson(chapter: 5)

/// One entry of a build's timeline.
enum Event: Equatable, Sendable, CustomStringConvertible {
    /// A step's work began.
    case start(String)
    /// A step's work returned.
    case finish(String)
    /// Something the spec did, such as cancelling a step or granting an approval.
    case note(String)

    var description: String {
        switch self {
        case .start(let title): "start \(title)"
        case .finish(let title): "finish \(title)"
        case .note(let text): "[\(text)]"
        }
    }
}

extension Recorder<Event> {
    /// Whether the work of the step titled `title` began.
    func started(_ title: String) -> Bool {
        contains(.start(title))
    }
}

/// What a queue saw when a step was handed to it.
struct Handoff: Sendable {
    /// The step itself, kept alive with its queue (see `EagerQueue.keptAlive`).
    let step: BuildStep
    let title: String
    let queue: String
    /// The titles of the steps it already depended on at that moment.
    let needs: Set<String>
}

/// A queue that, handed a ready step, waits until the step's work has begun before returning.
///
/// It is the worst case the documents warn about ("once added, an operation may run at any
/// time"), made certain: a dependency added after `addOperation` is always too late. It also
/// logs what each step depended on when it arrived.
final class EagerQueue: OperationQueue, @unchecked Sendable {  // immutable fields; `log` is Protected
    let label: String
    private let recorder: Recorder<Event>
    private let log = Protected<[Handoff]>([])

    /// Every queue made so far, and through `log` every step handed to one, kept for the whole run.
    ///
    /// On Linux a dependency tells its dependents it finished through unowned references: a
    /// cancelled step freed while the step it needs still works crashes the process when that
    /// step finishes. Releasing a queue that is still scheduling is not safe either.
    nonisolated(unsafe) private static var keptAlive: [EagerQueue] = []  // protected by keptAliveLock
    private static let keptAliveLock = NSLock()

    /// Creates a queue called `label` that recognises a step's start in `recorder`.
    init(_ label: String, recorder: Recorder<Event>) {
        self.label = label
        self.recorder = recorder
        super.init()
        name = label
        EagerQueue.keptAliveLock.withLock { EagerQueue.keptAlive.append(self) }
    }

    /// Every step handed to this queue, in order.
    var handoffs: [Handoff] {
        log.value
    }

    override func addOperation(_ op: Operation) {
        note(op)
        super.addOperation(op)
        waitForWork(of: op)
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        ops.forEach(note)
        super.addOperations(ops, waitUntilFinished: wait)
        ops.forEach(waitForWork)
    }

    private func note(_ op: Operation) {
        guard let step = op as? BuildStep else { return }
        let needs = Set(step.dependencies.compactMap { ($0 as? BuildStep)?.title })
        log.withValue {
            $0.append(Handoff(step: step, title: step.title, queue: label, needs: needs))
        }
    }

    private func waitForWork(of op: Operation) {
        guard let step = op as? BuildStep, step.isReady, !isSuspended else { return }
        blockUntil("“\(step.title)”, ready on a free queue, to begin its work") {
            recorder.started(step.title) || step.isFinished
        }
    }
}

/// One step of a graph shape: its title, the titles it needs, and which of two queues runs it.
struct Node: Sendable {
    let title: String
    let needs: [String]
    let queue: Int

    init(_ title: String, needs: [String] = [], queue: Int = 0) {
        self.title = title
        self.needs = needs
        self.queue = queue
    }
}

/// A named graph of steps, given to specs through `arguments:`.
struct Shape: Sendable, CustomTestStringConvertible {
    let name: String
    let nodes: [Node]

    var testDescription: String { name }

    /// Every edge as (dependency, dependent).
    var edges: [(dependency: String, dependent: String)] {
        nodes.flatMap { node in node.needs.map { (dependency: $0, dependent: node.title) } }
    }

    static let chain = Shape(
        name: "chain",
        nodes: [
            Node("fetch"), Node("compile", needs: ["fetch"]), Node("link", needs: ["compile"]),
            Node("test", needs: ["link"]),
        ]
    )
    static let diamond = Shape(
        name: "diamond",
        nodes: [
            Node("configure"), Node("compile app", needs: ["configure"]),
            Node("compile tests", needs: ["configure"], queue: 1),
            Node("test", needs: ["compile app", "compile tests"]),
        ]
    )
    static let wideFanIn = Shape(
        name: "wide fan-in",
        nodes: (1...8).map { Node("shard \($0)", queue: $0 % 2) }
            + [Node("merge", needs: (1...8).map { "shard \($0)" })]
    )
    static let fanOut = Shape(
        name: "fan-out",
        nodes: [
            Node("checkout"), Node("lint", needs: ["checkout"]),
            Node("build", needs: ["checkout"], queue: 1),
            Node("docs", needs: ["checkout"], queue: 1),
        ]
    )
    static let crossQueue = Shape(
        name: "cross-queue",
        nodes: [
            Node("fetch", queue: 0), Node("compile", needs: ["fetch"], queue: 1),
            Node("assets", needs: ["fetch"], queue: 0), Node("link", needs: ["compile"], queue: 0),
            Node("bundle", needs: ["link", "assets"], queue: 1),
            Node("sign", needs: ["bundle"], queue: 0),
        ]
    )

    static let all: [Shape] = [chain, diamond, wideFanIn, fanOut, crossQueue]
}

/// A build made from a shape: the plan, its steps by title, and its two eager queues.
struct Build {
    var plan = BuildPlan()
    var steps: [String: BuildStep] = [:]
    /// Every step in the order of the shape, including any that share a title.
    var everyStep: [BuildStep] = []
    let queues: [EagerQueue]

    /// Makes a plan for `shape` whose every step records its start and its finish.
    ///
    /// The plan lists the steps in the reverse of the shape's order, dependents before the steps
    /// they need: a correct plan does not care, and a queue then meets each dependent first.
    init(_ shape: Shape, recorder: Recorder<Event>) {
        queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        for node in shape.nodes.reversed() {
            let step = BuildStep(node.title, work: Build.work(node.title, recorder: recorder))
            steps[node.title] = step
            everyStep.append(step)
            plan.add(step, needs: node.needs, on: queues[node.queue])
        }
    }

    /// Work that records its start and finish and returns `<title> output`.
    static func work(_ title: String, recorder: Recorder<Event>)
        -> @Sendable ([String: String]) -> String
    {
        { _ in
            recorder.record(.start(title))
            recorder.record(.finish(title))
            return "\(title) output"
        }
    }

    /// Whether every step has finished.
    var isFinished: Bool {
        steps.values.allSatisfy(\.isFinished)
    }
}

/// Calls `plan.start()` on a thread of its own and waits, bounded, until it returns or throws.
///
/// `start()` blocks while an `EagerQueue` waits for a step to begin; on a thread of its own
/// that wait cannot hold up the threads the steps themselves need. Returns nil, after recording
/// an issue, if `start()` never returned: wiring a step to itself deadlocks on Linux. The spec
/// must then touch none of the plan's steps again (their locks may be held for good). Correct
/// code refuses an unsound plan at once, before touching any queue, yet the thread that runs
/// `start()` must first be scheduled: half a second was too short on a busy two-core machine
/// (a sound `start()` reported stuck, once alone and once whole, at a load average of 19), so the
/// bound is the standard one, which only a plan that deadlocks waits out.
func attempt(
    _ plan: BuildPlan, timeout: Duration = Bound.standard,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Result<Void, BuildError>? {
    struct Box: @unchecked Sendable {  // handed to exactly one thread, then only read there
        let plan: BuildPlan
    }
    let box = Box(plan: plan)
    return await callOnItsOwnThread(
        "BuildPlan.start()",
        timeout: timeout,
        hint: """
            start() is stuck. A step wired to itself (addDependency(self)) deadlocks on Linux: \
            look for cycles, including a step that needs itself, before calling addDependency.
            \(lesson.see("Refuse cycles before you enqueue"))
            """,
        sourceLocation: sourceLocation
    ) { () -> Result<Void, BuildError> in
        do throws(BuildError) {
            try box.plan.start()
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}

/// The spec stopped because `BuildPlan.start()` never returned; the issue is already recorded.
struct StartNeverReturned: Error, CustomStringConvertible {
    var description: String { "BuildPlan.start() never returned; the spec stopped there" }
}

/// Starts a plan that should be sound: throws what `start()` threw, or `StartNeverReturned`.
func launch(_ plan: BuildPlan, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    guard let outcome = await attempt(plan, timeout: Bound.standard, sourceLocation: sourceLocation)
    else {
        throw StartNeverReturned()
    }
    try outcome.get()
}

/// Makes an eager queue that starts suspended, to hold a step back without blocking a thread.
func heldQueue(_ label: String, recorder: Recorder<Event>) -> EagerQueue {
    let queue = EagerQueue(label, recorder: recorder)
    queue.isSuspended = true
    return queue
}
