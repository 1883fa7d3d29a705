import Chapter4
import Foundation
import KataTestSupport
import Testing

/// A ready, non-concurrent operation that lets a rival call in between a runner's look at one of
/// its states and what the runner does next.
///
/// The first time the racing thread reads the watched getter and gets the answer that allows the
/// act ("ready", or "not finished"), the getter runs the rival to its end before it returns that
/// answer: exactly what a second thread does when it lands between a check and the act. A runner
/// that claimed the operation before its look keeps the rival off; one that holds its lock across
/// the look keeps it waiting, and the racing thread goes on after a short bound.
final class WindowedOperation: Operation, @unchecked Sendable {  // its state lives in Protected boxes
    /// The getter whose answer opens the window.
    enum Watched: Sendable {
        case isReady
        case isFinished
    }

    private let window: RaceWindow
    private let watched: Watched
    private let starts = Protected<[ObjectIdentifier]>([])
    private let runs = Protected(0)

    init(window: RaceWindow, watching watched: Watched) {
        self.window = window
        self.watched = watched
    }

    /// The threads `start()` was called from, in order.
    var startedFrom: [ObjectIdentifier] { starts.value }

    /// How many times the work ran.
    var runCount: Int { runs.value }

    override var isReady: Bool {
        let ready = super.isReady
        if watched == .isReady && ready { window.checked() }
        return ready
    }

    override var isFinished: Bool {
        let finished = super.isFinished
        if watched == .isFinished && !finished { window.checked() }
        return finished
    }

    override func start() {
        let count = starts.withValue { threads in
            threads.append(currentThreadIdentity())
            return threads.count
        }
        if count > 1 { return }  // Foundation would do nothing, or stop the program: the spec reports it
        super.start()
    }

    override func main() {
        runs.withValue { $0 += 1 }
    }
}

/// Scenarios run in a child process: one thread's call lands between another's check and act,
/// and an operation started twice, or started while in a queue, stops the program.
enum Interference {
    /// `perform(_:)` on one thread is between its look at `isReady` and its `start()` when
    /// another thread hands the same operation to `enqueue(_:on:)`.
    static func enqueuedWhileClaimed() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = OperationQueue()
        let window = RaceWindow()
        let operation = WindowedOperation(window: window, watching: .isReady)
        let performed = Protected<Bool?>(nil)
        let enqueued = Protected<Bool?>(nil)
        LastWords.note(
            "claimedThenEnqueued",
            """
            The program stopped after enqueue(_:on:) was handed an operation that perform(_:) on \
            another thread had already checked and was about to start: the queue got it too, \
            and the operation was started twice, or started by hand while it sat in a queue.
            """)
        window.race(
            { performed.withValue { $0 = runner.perform(operation) } },
            against: { enqueued.withValue { $0 = runner.enqueue(operation, on: queue) } })
        guard settles(within: Bound.standard, { performed.value != nil && enqueued.value != nil }) else {
            LastWords.fail(
                "claimedThenEnqueued",
                "perform(_:) and enqueue(_:on:) on two threads did not both return within \(Bound.standard.seconds) s.")
        }
        if enqueued.value == true || operation.startedFrom.count > 1 {
            LastWords.fail(
                "claimedThenEnqueued",
                """
                perform(_:) on another thread had looked at the operation and was about to start \
                it, and enqueue(_:on:) meanwhile returned \(enqueued.value == true) \
                (start() was called \(operation.startedFrom.count) times). An operation that \
                another thread has claimed is that thread's: enqueue(_:on:) must refuse it, or the \
                queue and the other thread both start it.
                """)
        }
    }

    /// `enqueue(_:on:)` on one thread is between its look at `isFinished` and `addOperation`
    /// when another thread hands the same operation to `perform(_:)`.
    static func performedWhileEnqueueChecks() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = OperationQueue()
        let window = RaceWindow()
        let operation = WindowedOperation(window: window, watching: .isFinished)
        let performed = Protected<Bool?>(nil)
        let enqueued = Protected<Bool?>(nil)
        LastWords.note(
            "enqueueCheckRaced",
            """
            The program stopped after perform(_:) on another thread ran an operation that \
            enqueue(_:on:) had already checked and was about to add to a queue: a queue was \
            given an operation that was started by hand, or it was started twice.
            """)
        window.race(
            { enqueued.withValue { $0 = runner.enqueue(operation, on: queue) } },
            against: { performed.withValue { $0 = runner.perform(operation) } })
        guard settles(within: Bound.standard, { performed.value != nil && enqueued.value != nil }) else {
            LastWords.fail(
                "enqueueCheckRaced",
                "enqueue(_:on:) and perform(_:) on two threads did not both return within \(Bound.standard.seconds) s.")
        }
        if enqueued.value == true {
            _ = settles(within: Bound.standard) { operation.isFinished }  // the queue runs it
        }
        if operation.startedFrom.count != 1 {
            LastWords.fail(
                "enqueueCheckRaced",
                """
                enqueue(_:on:) had looked at the operation and was about to add it to a queue \
                when perform(_:) on another thread got it; enqueue returned \(enqueued.value == true), \
                and start() was called \(operation.startedFrom.count) times. Claim the operation \
                in enqueue(_:on:) too, before its checks, and release the claim only once it is \
                in the queue: a perform(_:) that finds it claimed leaves it alone.
                """)
        }
    }
}

@Suite("A call that lands between another thread's check and act changes nothing", .watched)
struct InterleavingSpecs {
    // Look at where ManualRunner takes its claim in perform(_:) and in the retries: before the
    // checks, or only after them. Lesson: "Two threads, one operation".
    // Covers: C27, C28
    // Paths: interference
    @Test(
        "a perform(_:) that lands between another perform(_:)'s look at isReady and its start() leaves the operation alone"
    )
    func claimComesBeforeTheChecks() async {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let window = RaceWindow()
        let operation = WindowedOperation(window: window, watching: .isReady)
        let first = Protected<Bool?>(nil)
        let second = Protected<Bool?>(nil)
        window.race(
            { first.withValue { $0 = runner.perform(operation) } },
            against: { second.withValue { $0 = runner.perform(operation) } })
        let returned = await waitUntil(
            "perform(_:) on both threads to return",
            hint: """
                One of the calls waited for the other's work. Hold the runner's lock for the \
                bookkeeping only, never across start(). \(lesson.see("Two threads, one operation"))
                """
        ) { first.value != nil && second.value != nil }
        guard returned else { return }
        #expect(
            operation.startedFrom.count == 1 && operation.runCount == 1,
            """
            One thread's perform(_:) had found the operation ready and was about to start it when \
            a second thread's perform(_:) got it; start() was called \
            \(operation.startedFrom.count) times (the work ran \(operation.runCount) times). \
            The second call started it, then the first started it again on the strength of its \
            old look: a claim taken after the checks comes too late. Claim the operation \
            first, then check it, then start it, then release the claim. \
            \(lesson.see("Two threads, one operation"))
            """)
        #expect(
            second.value == true,
            """
            The second thread's perform(_:) found the operation claimed by a thread that was about \
            to start it, and returned false ("not ready yet, try again later"). A claimed operation \
            is handled by the thread that holds the claim: leave it alone and return true. \
            \(lesson.see("Two threads, one operation"))
            """)
    }

    // Look at ManualRunner.enqueue(_:on:) next to perform(_:): whether enqueue refuses an
    // operation another thread has claimed, and whether it claims the operation itself while it
    // checks it. Lessons: "Two threads, one operation", "Who owns an operation".
    // Covers: C27, C34
    // Paths: interference
    @Test("enqueue(_:on:) refuses an operation perform(_:) has claimed")
    func enqueueRefusesAClaimedOperation() async {
        LastWords.forget("claimedThenEnqueued")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: enqueue(_:on:) took an operation \
            that perform(_:) on another thread had claimed, and both started it. \
            \(lesson.see("Who owns an operation"))
            """
        ) {
            Interference.enqueuedWhileClaimed()
        }
        LastWords.explain("claimedThenEnqueued", outcome)
    }

    // Look at ManualRunner.enqueue(_:on:): whether it claims the operation before it checks
    // that nobody started it, and keeps the claim until the operation is in the queue.
    // Lessons: "Two threads, one operation", "Who owns an operation".
    // Covers: C27, C34
    // Paths: interference
    @Test("a perform(_:) that lands between enqueue(_:on:)'s check and addOperation leaves the operation to the queue")
    func enqueueClaimsWhileItChecks() async {
        LastWords.forget("enqueueCheckRaced")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: perform(_:) on another thread \
            started an operation that enqueue(_:on:) had checked and then added to a queue. \
            \(lesson.see("Who owns an operation"))
            """
        ) {
            Interference.performedWhileEnqueueChecks()
        }
        LastWords.explain("enqueueCheckRaced", outcome)
    }

    // Look at ManualRunner.enqueue(_:on:): what its books say while addOperation has the
    // operation and the queue has not taken it yet. The claim, or the book of queued operations,
    // must keep every other caller off until the queue has it. Lessons: "Two threads, one
    // operation", "Who owns an operation".
    // Covers: C27, C34
    // Paths: interference, collaborators
    @Test("a perform(_:) that lands while enqueue(_:on:) is adding the operation to the queue leaves it to the queue")
    func enqueueKeepsItWhileAdding() async {
        LastWords.forget("performedWhileAdding")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: perform(_:) on another thread \
            started an operation that enqueue(_:on:) was handing to addOperation, and the queue \
            was then given an operation started by hand. \(lesson.see("Two threads, one operation"))
            """
        ) {
            Interference.performedWhileEnqueueAdds()
        }
        LastWords.explain("performedWhileAdding", outcome)
    }

    // Look at what ManualRunner.run(_:) and its retries do with an operation they found claimed
    // when the claimer was enqueue(_:on:), which then put it in a queue: every retry looks at the
    // book of queued operations too, and leaves such an operation to its queue. Lessons: "Two
    // threads, one operation", "Who owns an operation".
    // Covers: C31, C34
    // Paths: interference, collaborators
    @Test("a run(_:) that lands while enqueue(_:on:) checks the operation never starts it once the queue has it")
    func retryLeavesWhatEnqueueQueued() async {
        LastWords.forget("runWhileEnqueueChecks")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: run(_:) came while enqueue(_:on:) \
            held the operation, and a retry later called start() by hand on it while it waited \
            in the queue enqueue(_:on:) had put it in. \(lesson.see("Who owns an operation"))
            """
        ) {
            Interference.runWhileEnqueueChecks()
        }
        LastWords.explain("runWhileEnqueueChecks", outcome)
    }
}

/// A queue whose `addOperation(_:)` lets a rival call run on another thread before it takes the
/// operation in: the moment `enqueue(_:on:)` has handed the operation over and the queue does not
/// own it yet.
final class AddingQueue: OperationQueue, @unchecked Sendable {  // `rival` lives in a Protected box
    private let rival = Protected<(@Sendable () -> Void)?>(nil)

    /// Runs `body` on another thread during the next `addOperation(_:)`, before the queue takes
    /// the operation; waits for it a short bound.
    func duringNextAdd(_ body: @escaping @Sendable () -> Void) {
        rival.withValue { $0 = body }
    }

    override func addOperation(_ operation: Operation) {
        if let rival = rival.withValue({ $0.take() }) {
            let returned = Gate("the rival call to return")
            Thread.detachNewThread {
                rival()
                returned.open()
            }
            returned.wait(timeout: Bound.scaled(.milliseconds(50)))
        }
        super.addOperation(operation)
    }
}

extension Interference {
    /// `enqueue(_:on:)` has handed the operation to `addOperation` when another thread hands the
    /// same operation to `perform(_:)`.
    static func performedWhileEnqueueAdds() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = AddingQueue()
        queue.isSuspended = true
        let operation = ProbeOperation()
        let performed = Protected<Bool?>(nil)
        queue.duringNextAdd { performed.withValue { $0 = runner.perform(operation) } }
        LastWords.note(
            "performedWhileAdding",
            """
            The program stopped after perform(_:) on another thread started an operation that \
            enqueue(_:on:) was adding to a queue: the queue was then given an operation started \
            by hand.
            """)
        let enqueued = runner.enqueue(operation, on: queue)
        if !enqueued || operation.startCount != 0 {
            LastWords.fail(
                "performedWhileAdding",
                """
                enqueue(_:on:) returned \(enqueued) for an operation nobody had started, and \
                perform(_:) on another thread, which came while addOperation had it, returned \
                \(performed.value.map(String.init) ?? "nothing yet") and called start() \
                \(operation.startCount) times. Until the queue has taken the operation, keep it \
                claimed, or in the book of queued operations already: a perform(_:) then leaves \
                it alone.
                """)
        }
        queue.isSuspended = false
        guard settles(within: Bound.standard, { operation.isFinished }), operation.runCount == 1 else {
            LastWords.fail(
                "performedWhileAdding",
                "The queue that enqueue(_:on:) put the operation in ran it \(operation.runCount) times; expected once.")
        }
    }

    /// `enqueue(_:on:)` on one thread is between its look at `isFinished` and `addOperation` when
    /// another thread hands the same operation to `run(_:)`; the queue stays suspended a while.
    static func runWhileEnqueueChecks() {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let queue = OperationQueue()
        queue.isSuspended = true
        let window = RaceWindow()
        let operation = WindowedOperation(window: window, watching: .isFinished)
        let enqueued = Protected<Bool?>(nil)
        let handedToRun = Protected(false)
        LastWords.note(
            "runWhileEnqueueChecks",
            """
            The program stopped after run(_:) came while enqueue(_:on:) was checking an \
            operation: a retry called start() by hand on the operation once it waited in the \
            queue enqueue(_:on:) had put it in.
            """)
        window.race(
            { enqueued.withValue { $0 = runner.enqueue(operation, on: queue) } },
            against: {
                runner.run(operation)
                handedToRun.withValue { $0 = true }
            })
        guard settles(within: Bound.standard, { enqueued.value != nil && handedToRun.value }) else {
            LastWords.fail(
                "runWhileEnqueueChecks",
                "enqueue(_:on:) and run(_:) on two threads did not both return within \(Bound.standard.seconds) s.")
        }
        if enqueued.value == true {
            // The queue owns it and is suspended: a start() now is a start by hand.
            if settles(within: Chapter4Bound.quietPeriod, { !operation.startedFrom.isEmpty }) {
                LastWords.fail(
                    "runWhileEnqueueChecks",
                    """
                    enqueue(_:on:) put the operation in a suspended queue, and run(_:), which came \
                    while enqueue(_:on:) held it, started it by hand later. A retry that finds an \
                    operation claimed looks again; if the claimer put it in a queue, the queue \
                    owns it: every retry looks at the book of queued operations too.
                    """)
            }
            queue.isSuspended = false
        }
        guard settles(within: Bound.standard, { operation.isFinished }), operation.startedFrom.count == 1 else {
            LastWords.fail(
                "runWhileEnqueueChecks",
                """
                enqueue(_:on:) returned \(enqueued.value == true); the operation was then started \
                \(operation.startedFrom.count) times and is \(operation.isFinished ? "" : "not ")finished; \
                expected it started once, by the queue or by the runner.
                """)
        }
        guard settles(within: Chapter4Bound.retry, { runner.waitingCount == 0 }) else {
            LastWords.fail(
                "runWhileEnqueueChecks",
                "The operation finished, yet waitingCount is still \(runner.waitingCount): a retry never ended.")
        }
    }
}
