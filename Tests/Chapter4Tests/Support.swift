import Foundation
import KataTestSupport

/// Where this chapter's failure messages send the learner.
let lesson = Lesson(chapter: 4)

/// The limits this chapter's specs wait within.
enum Chapter4Bound {
    /// The retry interval the specs give the runner: short, so that retries come quickly.
    static let retryInterval: Duration = .milliseconds(5)

    /// How long a spec waits for a retry that correct code makes within a few intervals.
    ///
    /// A hundred and twenty intervals: a runner that has not looked again by then is not retrying.
    static let retry: Duration = Bound.scaled(.milliseconds(600))

    /// How long a child process watches for a forbidden `start()` that correct code never makes.
    static let quietPeriod: Duration = Bound.scaled(.milliseconds(100))

    /// How many windows a spec that counts timer fires measures before it gives up finding one
    /// in which timers kept pace: on a machine that busy, it cannot tell a fast timer from a
    /// right one, and passes.
    static let paceWindows = 6

    /// How long after a thread's first read of `isReady` its further reads count as the same look.
    ///
    /// Far below the shortest interval a runner may use (1 ms), scaled but never past half of
    /// it: a design that reads `isReady` twice in one look is not a timer that fires twice.
    static let oneLook: Duration = min(Bound.scaled(.microseconds(200)), .microseconds(500))
}

/// A non-concurrent operation that counts how often it is started and run, and on which thread.
///
/// Started while it is not ready, or a second time, it does nothing instead of trapping: the
/// exit tests show the trap, and the other specs can then report the mistake and go on.
final class ProbeOperation: Operation, @unchecked Sendable {  // its state lives in Protected boxes
    private let work: @Sendable () -> Void
    private let onStart: @Sendable (Int) -> Void
    private let readyWhen: @Sendable () -> Bool
    private let starts = Protected(0)
    private let runs = Protected(0)
    private let looks = Protected<(count: Int, thread: ObjectIdentifier?, began: ContinuousClock.Instant)>(
        (0, nil, .now))
    private let blockSets = Protected(0)
    private let workThread = Protected<ObjectIdentifier?>(nil)

    /// Creates a probe that runs `work` in `main` and calls `onStart` with the count of each start.
    ///
    /// It is ready when its dependencies have finished and `readyWhen` says so, or once cancelled.
    init(
        readyWhen: @escaping @Sendable () -> Bool = { true },
        onStart: @escaping @Sendable (Int) -> Void = { _ in },
        work: @escaping @Sendable () -> Void = {}
    ) {
        self.readyWhen = readyWhen
        self.onStart = onStart
        self.work = work
    }

    /// How many times `start()` was called.
    var startCount: Int { starts.value }

    /// How many times the work ran.
    var runCount: Int { runs.value }

    /// The thread the work ran on, if it ran.
    var ranOn: ObjectIdentifier? { workThread.value }

    /// How many times anyone looked at whether the operation is ready: a runner asks on every look.
    ///
    /// Reads of `isReady` made by one thread within `Chapter4Bound.oneLook` of the first are one
    /// look: a runner may ask twice in one look (once with `isCancelled`, once alone), and that is
    /// still one look. A timer that fires too often is still counted, a look per `oneLook` at least.
    var readinessChecks: Int { looks.value.count }

    /// How many times anyone set the operation's completion block.
    var completionBlockSets: Int { blockSets.value }

    override var completionBlock: (@Sendable () -> Void)? {
        get { super.completionBlock }
        set {
            blockSets.withValue { $0 += 1 }
            super.completionBlock = newValue
        }
    }

    override var isReady: Bool {
        let now = ContinuousClock.now
        let reader = currentThreadIdentity()
        looks.withValue { looks in
            if looks.count == 0 || looks.thread != reader || now - looks.began >= Chapter4Bound.oneLook {
                looks = (looks.count + 1, reader, now)
            }
        }
        return super.isReady && (isCancelled || readyWhen())  // cancelled is ready, as Foundation's are
    }

    override func start() {
        let count = starts.withValue { count in
            count += 1
            return count
        }
        onStart(count)
        // Foundation would stop the whole test process here; refuse, so that the spec reports it.
        if count > 1 || (!isReady && !isCancelled) { return }
        super.start()
    }

    override func main() {
        runs.withValue { $0 += 1 }
        workThread.withValue { $0 = ObjectIdentifier(Thread.current) }
        work()
    }
}

/// The identity of the calling thread, comparable with `ProbeOperation.ranOn`.
func currentThreadIdentity() -> ObjectIdentifier {
    ObjectIdentifier(Thread.current)
}

/// A concurrent operation whose work waits on its own thread until the spec opens `release`.
///
/// It records the thread each `start()` came from, and counts the reads of `isFinished` made by
/// one watched thread, so a spec can tell a blocking wait from a loop that polls.
final class ConcurrentProbe: Operation, @unchecked Sendable {  // its state lives in Protected boxes
    private let release: Gate
    private let state = Protected((executing: false, finished: false))
    private let startThreads = Protected<[ObjectIdentifier]>([])
    private let reads = Protected<(watched: ObjectIdentifier?, count: Int)>((nil, 0))

    private let onStart: @Sendable () -> Void

    /// Creates a probe whose work ends when `release` opens; its first `start()` calls `onStart`
    /// first, on the thread that started it.
    init(release: Gate, onStart: @escaping @Sendable () -> Void = {}) {
        self.release = release
        self.onStart = onStart
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { state.value.executing }
    override var isFinished: Bool {
        let reader = currentThreadIdentity()
        reads.withValue { if $0.watched == reader { $0.count += 1 } }
        return state.value.finished
    }

    /// The threads `start()` was called from, in order.
    var startedFrom: [ObjectIdentifier] { startThreads.value }

    /// Counts, from now on, the reads of `isFinished` made by the calling thread.
    func watchReadsOnThisThread() {
        let reader = currentThreadIdentity()
        reads.withValue { $0 = (reader, 0) }
    }

    /// How many times the watched thread read `isFinished`.
    var watchedReads: Int { reads.value.count }

    override func start() {
        let count = startThreads.withValue { threads in
            threads.append(currentThreadIdentity())
            return threads.count
        }
        if count > 1 { return }  // Foundation would trap; the spec reports the second start
        onStart()
        if isCancelled {
            finish()
            return
        }
        willChangeValue(forKey: "isExecuting")
        state.withValue { $0.executing = true }
        didChangeValue(forKey: "isExecuting")
        Thread.detachNewThread { [self] in
            release.wait(timeout: Bound.standard * 3)  // only the spec ends the work
            finish()
        }
    }

    private func finish() {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        state.withValue { $0 = (executing: false, finished: true) }
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}

/// A one-millisecond timer of the spec's own, which tells whether timers kept pace in a window.
///
/// On a busy machine a timer fires late, never early, and a starved 1 ms timer fires no more
/// often than a 2 ms one: a window in which this one fell behind cannot tell the two apart.
final class PaceTicker: @unchecked Sendable {  // `timer` is set once in init; `ticks` is Protected
    private let ticks = Protected(0)
    private let timer: any DispatchSourceTimer

    /// Starts ticking once a millisecond on a queue of its own.
    init() {
        timer = DispatchSource.makeTimerSource(
            queue: DispatchQueue(label: "OperationKata.Chapter4Tests.PaceTicker"))
        let ticks = ticks
        timer.setEventHandler { ticks.withValue { $0 += 1 } }
        timer.schedule(deadline: .now(), repeating: .milliseconds(1), leeway: .nanoseconds(0))
        timer.resume()
    }

    deinit { timer.cancel() }

    /// How many times it has fired.
    var count: Int { ticks.value }

    /// Whether it fired at least `share` of the times it was due in `elapsed`, from `start` on.
    func keptPace(since start: Int, over elapsed: Duration, share: Double = 0.7) -> Bool {
        Double(count - start) >= share * (elapsed / .milliseconds(1))
    }
}
