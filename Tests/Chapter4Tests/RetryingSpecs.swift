import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("An operation that is not ready yet is retried on a timer until it can start", .watched)
struct RetryingSpecs {
    /// A short retry interval keeps these specs fast.
    static let interval = Chapter4Bound.retryInterval

    /// How long the waiting operation stays not ready, and who holds it meanwhile.
    enum Waiting: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case briefly = "its dependency finishes right after run(_:)"
        case pastSeveralLooks = "its dependency finishes only after the runner looked at it twice more"
        case letGo = "the caller lets go of it, and it becomes ready later by its own isReady"
        case letGoAfterTwoHandOvers =
            "run(_:) gets it twice while it waits, then the caller lets go of it until it is ready"
        case checkedElsewhere = "another thread is checking it with perform(_:) while the runner looks again"
        case handedOverWhileChecked =
            "run(_:) gets it while another thread's perform(_:) is checking it, and finds it not ready"

        var testDescription: String { rawValue }
    }

    /// What a spec keeps of an operation it handed to `run(_:)`.
    struct HandedOver {
        /// The operation, for as long as anyone holds it.
        var reference: WeakReference<ProbeOperation>
        /// The operation itself, unless the spec let go of it.
        var kept: ProbeOperation?
        /// How often its readiness had been checked when `run(_:)` returned.
        var checksAtHandOver: Int
        /// Makes the operation ready.
        var makeReady: @Sendable () -> Void
        /// Holds another thread inside its look at the operation's readiness, when asked to.
        var checker: Checker
    }

    /// Another thread that hands the waiting operation to `perform(_:)` and is held inside its
    /// first look at `isReady`, so that the runner's own looks meanwhile find the operation
    /// claimed by that thread.
    final class Checker: Sendable {
        private let thread = Protected<ObjectIdentifier?>(nil)
        private let held = Protected(false)
        /// Opens once the other thread's `perform(_:)` is inside its look at `isReady`.
        let inside = Gate("perform(_:) on another thread is asking whether the operation is ready")
        /// Lets that look go on.
        let mayGoOn = Gate("the other thread's look at the operation may go on")
        /// Opens once the other thread's `perform(_:)` has returned.
        let returned = Gate("perform(_:) on the other thread returned")

        /// Called from the operation's `isReady`: holds the other thread's first look there.
        func holdIfChecking() {
            guard thread.value == currentThreadIdentity() else { return }
            let first = held.withValue { wasHeld in
                defer { wasHeld = true }
                return !wasHeld
            }
            guard first else { return }
            inside.open()
            mayGoOn.wait(timeout: Bound.standard * 3)
        }

        /// Calls `perform(_:)` on a new thread until a call asks whether the operation is ready:
        /// a call that finds it claimed by one of the runner's own looks leaves it alone at once.
        func check(_ operation: Operation, on runner: ManualRunner) {
            Thread.detachNewThread { [self] in
                thread.withValue { $0 = currentThreadIdentity() }
                let deadline = ContinuousClock.now + Bound.standard
                repeat {
                    runner.perform(operation)
                } while !inside.isOpen && ContinuousClock.now < deadline
                returned.open()
            }
        }

        /// Starts `check(_:on:)` and waits until that call is held inside its look at `isReady`;
        /// returns whether it got there.
        func holdInside(_ operation: Operation, on runner: ManualRunner) async -> Bool {
            check(operation, on: runner)
            return await waitUntil(
                "perform(_:) on another thread to ask whether the waiting operation is ready",
                hint: """
                    perform(_:) must look at isReady before it starts an operation, on the thread \
                    that called it. \(lesson.see("Starting by hand"))
                    """,
                givingUpWhen: { self.returned.isOpen ? "perform(_:) kept returning without asking" : nil }
            ) { inside.isOpen }
        }
    }

    /// Hands `run(_:)` a probe that is not ready yet and counts its starts and runs in `starts`
    /// and `runs`; nil if the spec may not go on. Only the runner holds the probe when the spec
    /// lets go of it; that probe has no dependency, which Foundation would leave pointing at it
    /// once it is freed. When `run(_:)` gets it while another thread checks it, that check is
    /// held inside its look at `isReady` for the whole call, then finds the probe not ready.
    static func handOver(
        _ waiting: Waiting, to runner: ManualRunner, starts: Protected<Int>, runs: Protected<Int>
    ) async -> HandedOver? {
        let ready = Protected(false)
        let dependency = BlockOperation {}
        let checker = Checker()
        // Its own isReady decides where a dependency would keep Foundation from asking it.
        let letGo = waiting == .letGo || waiting == .letGoAfterTwoHandOvers
        let byItsOwnIsReady =
            letGo || waiting == .checkedElsewhere || waiting == .handedOverWhileChecked
        let operation = ProbeOperation(
            readyWhen: {
                checker.holdIfChecking()
                return !byItsOwnIsReady || ready.value
            },
            onStart: { count in starts.withValue { $0 = count } },
            work: { runs.withValue { $0 += 1 } })
        let makeReady: @Sendable () -> Void
        if byItsOwnIsReady {
            makeReady = { ready.withValue { $0 = true } }
        } else {
            operation.addDependency(dependency)
            makeReady = { dependency.start() }
        }
        if waiting == .handedOverWhileChecked {
            defer { checker.mayGoOn.open() }
            guard await checker.holdInside(operation, on: runner) else { return nil }
            let ran = await callOnItsOwnThread(
                "run(_:) called while perform(_:) on another thread was checking the operation",
                hint: """
                    run(_:) waited for another thread's look at the operation: a lock held across \
                    the checks and start() holds up every caller for as long as any one operation \
                    is checked or started. Hold the runner's lock for the bookkeeping only, never \
                    across a look at the operation or its start(). \
                    \(lesson.see("Two threads, one operation"))
                    """
            ) {
                runner.run(operation)
                return true
            }
            guard ran != nil else { return nil }
            checker.mayGoOn.open()
            let returned = await waitUntil(
                "perform(_:) on the other thread to return once its look went on"
            ) { checker.returned.isOpen }
            guard returned else { return nil }
        } else {
            runner.run(operation)
            if waiting == .letGoAfterTwoHandOvers { runner.run(operation) }
        }
        return HandedOver(
            reference: WeakReference(operation), kept: letGo ? nil : operation,
            checksAtHandOver: operation.readinessChecks, makeReady: makeReady, checker: checker)
    }

    /// Holds another thread's `perform(_:)` inside its look at the waiting `operation` while the
    /// runner looks five more times at a second waiting operation, then checks that the runner
    /// still retries the first; returns whether the spec may go on.
    ///
    /// The runner's looks at the second operation are the spec's clock: they come on the same
    /// interval as its looks at the first, which meanwhile find it claimed by the other thread.
    /// This case runs long enough to meet the moments when other suites hold Dispatch's workers
    /// at gates, which can keep a runner's retries waiting for a second (see Tests/PLATFORM.md),
    /// so its waits for a retry have the standard bound.
    static func keepsRetrying(
        _ operation: ProbeOperation, whileCheckedBy checker: Checker, on runner: ManualRunner
    ) async -> Bool {
        let other = ProbeOperation()
        other.addDependency(BlockOperation {})  // never finishes: only a cancel makes it ready
        runner.run(other)
        defer { checker.mayGoOn.open() }
        let inside = await checker.holdInside(operation, on: runner)
        let looksAtStart = other.readinessChecks
        var clockRan = false
        if inside {
            clockRan = await comesTrue(within: Bound.standard) {
                other.readinessChecks >= looksAtStart + 5
            }
        }
        if inside && !clockRan {
            // Tells a retry that stopped from one that waits for the other thread's look.
            let looksWhileHeld = other.readinessChecks - looksAtStart
            checker.mayGoOn.open()
            let resumed = await comesTrue(within: Chapter4Bound.retry) {
                other.readinessChecks > looksAtStart + looksWhileHeld
            }
            Issue.record(
                resumed
                    ? """
                    While perform(_:) on another thread was inside its look at whether the first \
                    operation was ready, the runner looked only \(looksWhileHeld) times in \
                    \(Bound.standard.seconds) s at a second waiting operation, and looked again as \
                    soon as that other thread's look went on: its retries waited for the other \
                    thread. A lock held across the checks and start() (a lock around the whole \
                    attempt) holds up every retry, and every caller, for as long as any one \
                    operation is checked or started. Hold the runner's lock for the bookkeeping \
                    only, never across a look at the operation or its start(). \
                    \(lesson.see("Two threads, one operation"))
                    """
                    : """
                    The runner had been retrying, but while perform(_:) on another thread was \
                    checking the first operation it looked only \(looksWhileHeld) times in \
                    \(Bound.standard.seconds) s at a second waiting operation, and not again once \
                    that look went on: its retries stopped. A retry must keep looking at every \
                    waiting operation, whatever another thread does with one of them. \
                    \(lesson.see("Retrying with a timer"))
                    """)
        }
        let waitingWhileChecked = runner.waitingCount
        checker.mayGoOn.open()
        await waitUntil("perform(_:) on the other thread to return once its look went on") {
            checker.returned.isOpen
        }
        other.cancel()
        guard clockRan else { return false }
        await waitUntil("the runner to finish the second waiting operation once it was cancelled") {
            other.isFinished
        }
        #expect(
            waitingWhileChecked == 2,
            """
            While perform(_:) on another thread was asking whether the operation was ready, the \
            runner looked five times at a second waiting operation, and waitingCount fell from 2 \
            to \(waitingWhileChecked): a look that found the operation claimed by the other \
            thread gave up on it for good. Claimed is not started: leave it alone on that look \
            and look again on the next; stop only once it has started or finished. \
            \(lesson.see("Retrying with a timer"))
            """)
        return waitingWhileChecked == 2
    }

    // Look at how `ManualRunner.waitingCount` reads the runner's books while its retries change
    // them on a thread of their own. Lesson: "Retrying with a timer".
    // Covers: C31
    // Paths: values, collaborators
    @Test("waitingCount, read from another thread while retries start three waiting operations, counts down to 0")
    func waitingCountCountsDown() async {
        let runner = ManualRunner(retryInterval: Self.interval)
        let ready = (0..<3).map { _ in Protected(false) }
        let operations = ready.map { flag in ProbeOperation(readyWhen: { flag.value }) }
        defer { for operation in operations { operation.cancel() } }
        for operation in operations { runner.run(operation) }
        // A reader that shares no lock with the runner, as any thread of the app may be. Its
        // limit outlasts every wait below however late this task is scheduled (a busy machine
        // once ran them past five retries' time, and the reader stopped at 2); stop() ends it.
        let reader = Watcher(reading: { runner.waitingCount }, until: 0, for: Chapter4Bound.retry * 20)
        for (index, flag) in ready.enumerated() {
            flag.withValue { $0 = true }
            guard
                await waitUntil(
                    "the runner to start waiting operation \(index + 1) once it was ready",
                    timeout: Chapter4Bound.retry,
                    hint: "waitingCount is \(runner.waitingCount). \(lesson.see("Retrying with a timer"))",
                    { operations[index].isFinished })
            else {
                _ = await reader.stop(finalIsDue: false)
                return
            }
        }
        // The runner takes an operation off its books once its start() returned.
        let countedDown = await waitUntil(
            "waitingCount to reach 0 once the three operations finished", timeout: Chapter4Bound.retry,
            hint: "It is \(runner.waitingCount). \(lesson.see("Retrying with a timer"))", { runner.waitingCount == 0 })
        let seen = await reader.stop(finalIsDue: countedDown)
        #expect(
            seen.last == 0 && seen.allSatisfy { $0 <= 3 } && zip(seen, seen.dropFirst()).allSatisfy { $0 > $1 },
            """
            Three operations waited, and became ready one after another. A thread reading \
            waitingCount meanwhile saw \(seen.map(String.init).joined(separator: " → ")); expected \
            it to count down from at most 3 to 0. Any thread may read waitingCount while the \
            retries change the runner's books: read it under the runner's lock, like every other \
            use of the books.
            \(lesson.see("Retrying with a timer"))
            """)
    }

    /// Hands a runner of its own an operation that never becomes ready, and waits for one more
    /// look at it; returns whether runners of this kind retry at all. The cases that hold another
    /// thread for long ask first, so that a runner that never retries fails in a retry's time.
    static func retriesAtAll() async -> Bool {
        let runner = ManualRunner(retryInterval: Self.interval)
        let probe = ProbeOperation(readyWhen: { false })
        runner.run(probe)
        defer { probe.cancel() }  // the runner finishes it at its next look, and stops
        let handedOver = probe.readinessChecks
        return await waitUntil(
            "the runner to look again at an operation that was not ready",
            timeout: Chapter4Bound.retry,
            hint: """
                Nothing looked at it again after run(_:) returned. A Timer scheduled on a thread \
                whose run loop never runs never fires. \(lesson.see("Retrying with a timer"))
                """
        ) { probe.readinessChecks > handedOver }
    }

    // Look at ManualRunner.run(_:): the timer that should look at a waiting operation again,
    // as often as it takes, what it keeps while it waits and once it is done, what a look does
    // when another thread is checking the operation, and waitingCount. Lesson: "Retrying with
    // a timer".
    // Covers: C27, C31
    // Paths: memory, reuse, interference
    @Test(
        "a waiting operation starts once, when it becomes ready, and retrying stops",
        arguments: Waiting.allCases)
    func startsWhenReady(waiting: Waiting) async throws {
        if waiting == .checkedElsewhere || waiting == .handedOverWhileChecked {
            guard await Self.retriesAtAll() else { return }
        }
        let runner = ManualRunner(retryInterval: Self.interval)
        let starts = Protected(0)
        let runs = Protected(0)
        guard let handedOver = await Self.handOver(waiting, to: runner, starts: starts, runs: runs)
        else { return }
        try #require(
            starts.value == 0,
            """
            run(_:) started an operation that was not ready yet; start() on an operation that \
            is not ready is a programmer error. \(lesson.see("Retrying with a timer"))
            """)
        // A runner that found the operation claimed may count it as waiting at once or later.
        #expect(
            waiting == .handedOverWhileChecked || runner.waitingCount == 1,
            """
            After run(_:) with an operation that is not ready, waitingCount was \
            \(runner.waitingCount); the runner should be retrying exactly that one operation. \
            \(lesson.see("Retrying with a timer"))
            """)
        if waiting == .pastSeveralLooks, let operation = handedOver.kept {
            let looks = { operation.readinessChecks - handedOver.checksAtHandOver }
            let lookedTwice = await waitUntil(
                "the runner to look at the waiting operation again, twice, while it was not ready",
                timeout: Chapter4Bound.retry,
                hint: looks() == 0
                    ? """
                    Nothing looked at it again after run(_:) returned. A Timer scheduled on a \
                    thread whose run loop never runs never fires. \(lesson.see("Retrying with a timer"))
                    """
                    : """
                    After run(_:) returned, the runner asked \(looks() == 1 ? "once" : "\(looks()) times") \
                    whether the operation was ready, then stopped looking. A timer that fires once gives up on \
                    an operation that is still waiting: keep looking until it is ready or \
                    cancelled. \(lesson.see("Retrying with a timer"))
                    """
            ) { looks() >= 2 }
            guard lookedTwice else { return }
        }
        if waiting == .checkedElsewhere, let operation = handedOver.kept {
            let stillRetried = await Self.keepsRetrying(
                operation, whileCheckedBy: handedOver.checker, on: runner)
            guard stillRetried else { return }
        }
        handedOver.makeReady()
        let started = await waitUntil(
            "the runner to start the operation once it became ready",
            timeout: waiting == .checkedElsewhere || waiting == .handedOverWhileChecked
                ? Bound.standard : Chapter4Bound.retry,
            hint: handedOver.reference.value == nil
                ? """
                run(_:) promises to start the operation once it is ready, so the runner must hold \
                it until then: a retry that captures it weakly loses it as soon as the caller \
                lets go. \(lesson.see("Retrying with a timer"))
                """
                : waiting == .handedOverWhileChecked
                    ? """
                    run(_:) got the operation while perform(_:) on another thread had it claimed, and \
                    that check then found it not ready; nothing looked at it again. Claimed is not \
                    started: when run(_:)'s own first look finds it claimed, retry it as if it were \
                    not ready. \(lesson.see("Retrying with a timer"))
                    """
                    : """
                    Nothing retried it. A Timer scheduled on a thread whose run loop never runs \
                    never fires. \(lesson.see("Retrying with a timer"))
                    """,
            givingUpWhen: {
                handedOver.reference.value == nil && runs.value == 0
                    ? "the operation was freed before its work ran: nothing but the runner held it, and the runner did not"
                    : nil
            }
        ) { runs.value == 1 }
        guard started else { return }
        await waitUntil(
            "the runner to stop retrying once the operation had started",
            hint:
                "waitingCount stayed \(runner.waitingCount). \(lesson.see("Retrying with a timer"))"
        ) { runner.waitingCount == 0 }
        #expect(
            starts.value == 1 && runs.value == 1,
            """
            The operation was started \(starts.value) times and ran \(runs.value) times; it \
            should be started exactly once. \(lesson.see("Retrying with a timer"))
            """)
        guard handedOver.kept == nil else { return }
        await waitUntil(
            "the runner to let go of the operation once it had run, since the caller had let go of it",
            hint: """
                waitingCount is 0, yet something the runner keeps still holds the operation: a \
                retry taken off the books but never stopped (a timer that is not cancelled keeps \
                firing, and keeps its handler, for as long as anything holds it), or a second \
                retry made when run(_:) got the operation again. Keep one \
                retry per operation; once the operation has started, stop it and forget it. \
                \(lesson.see("Retrying with a timer"))
                """
        ) { handedOver.reference.value == nil }
    }

    // Look at what a retry in ManualRunner.run(_:) does with an operation cancelled while it
    // waits. Lessons: "Cancelled operations", "Retrying with a timer".
    // Covers: C29, C31
    // Paths: reuse
    @Test("a waiting operation that is cancelled is finished and no longer retried")
    func cancelledWhileWaiting() async {
        let runner = ManualRunner(retryInterval: Self.interval)
        let neverStarted = BlockOperation {}
        let operation = ProbeOperation()
        operation.addDependency(neverStarted)
        runner.run(operation)
        operation.cancel()
        let finished = await waitUntil(
            "the runner to move the cancelled operation to finished",
            timeout: Chapter4Bound.retry,
            hint: """
                The operation was cancelled while the runner retried it. Cancelled means ready: \
                the next retry should start it, which finishes it. \
                \(lesson.see("Retrying with a timer"))
                """
        ) { operation.isFinished }
        guard finished else { return }
        await waitUntil(
            "the runner to stop retrying the cancelled operation",
            hint: """
                waitingCount stayed \(runner.waitingCount): the runner keeps retrying an operation \
                that was cancelled. \(lesson.see("Retrying with a timer"))
                """
        ) { runner.waitingCount == 0 }
        #expect(
            operation.runCount == 0,
            "The cancelled operation's work ran \(operation.runCount) times; it must not run. \(lesson.see("Cancelled operations"))"
        )
    }

    /// How many looks the long wait lasts: more than a retry that gives up after a couple of hundred.
    static let longWaitLooks = 300

    /// How long the long wait may take: a millisecond timer on a machine whose cores are all
    /// busy made fewer than a hundred looks a second. A runner that gives up is seen at once.
    static let longWait: Duration = Bound.standard * 5

    // Look at what ends a retry in ManualRunner.run(_:): only the operation's start, or its
    // finish. A count of looks, or a time, after which it gives up leaves an operation that
    // becomes ready later never started. Lesson: "Retrying with a timer".
    // Covers: C31
    // Paths: values
    @Test("an operation that waits through hundreds of looks is still started once ready")
    func keepsLookingWhileItWaits() async {
        // A millisecond between looks, the shortest the lesson allows: hundreds take a moment.
        let runner = ManualRunner(retryInterval: .zero)
        let ready = Protected(false)
        let operation = ProbeOperation(readyWhen: { ready.value })
        runner.run(operation)
        defer { operation.cancel() }
        let handedOver = operation.readinessChecks
        let looks = { operation.readinessChecks - handedOver }
        let lookedAgain = await waitUntil(
            "the runner to look again at an operation that was not ready",
            timeout: Chapter4Bound.retry,
            hint: """
                Nothing looked at it again after run(_:) returned. A Timer scheduled on a thread \
                whose run loop never runs never fires. \(lesson.see("Retrying with a timer"))
                """
        ) { looks() > 0 }
        guard lookedAgain else { return }
        let waited = await waitUntil(
            "the runner to look \(Self.longWaitLooks) times at an operation that was not ready",
            timeout: Self.longWait,
            givingUpWhen: {
                looks() > 0 && runner.waitingCount == 0
                    ? """
                    the runner looked \(looks()) times, then stopped retrying the operation \
                    (waitingCount 0) while it was still not ready and not cancelled: nobody will \
                    start it once it is. Retry until it is ready or cancelled, for as long as \
                    that takes; no count of looks or time limit ends a retry
                    """ : nil
            }
        ) { looks() >= Self.longWaitLooks }
        guard waited else { return }
        ready.withValue { $0 = true }
        await waitUntil(
            "the runner to start the operation once it became ready, after \(looks()) looks",
            timeout: Chapter4Bound.retry,
            hint: """
                The runner stopped looking at an operation that was still waiting. Retry until it \
                is ready or cancelled, for as long as that takes. \(lesson.see("Retrying with a timer"))
                """
        ) { operation.runCount == 1 }
    }

    /// The retry intervals the look-counting spec gives the runner, from none at all to a long one.
    enum Interval: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case zero = "a retryInterval of zero, which still leaves a millisecond between looks"
        case subMillisecond = "a retryInterval of 100 µs, which still leaves a millisecond between looks"
        case fraction = "a retryInterval of 1.99 ms"
        case short = "a retryInterval of 5 ms"
        case long = "a retryInterval of 15 ms"
        case seconds = "a retryInterval of 2 s"

        var testDescription: String { rawValue }

        /// The interval handed to the runner.
        var duration: Duration {
            switch self {
            case .zero: .zero
            case .subMillisecond: .microseconds(100)
            case .fraction: .microseconds(1_990)
            case .short: .milliseconds(5)
            case .long: .milliseconds(15)
            case .seconds: .seconds(2)
            }
        }

        /// The shortest time a runner may leave between two looks at one operation.
        var atLeast: Duration { max(duration, .milliseconds(1)) }

        /// Whether the window the looks are counted in is shorter than one interval: the spec
        /// then counts from the hand-over, without waiting for a look that comes only later.
        var outlastsTheWindow: Bool { duration >= .seconds(1) }

        /// The looks allowed beyond one per interval that passed. A timer fires late under load,
        /// never early, so one per interval is a bound that load cannot break; beyond it come a
        /// look already under way when counting began, one more that a late timer kept pending
        /// behind it, and a first look that `run(_:)` left to its queue. Within a window shorter
        /// than the interval, only the latter may come.
        var extraLooks: Int { outlastsTheWindow ? 1 : 3 }

        /// How long the looks are counted: eight of the 15 ms interval, or long enough to see
        /// two looks of a runner that cuts a long interval to 100 ms.
        var window: Duration {
            Bound.scaled(outlastsTheWindow ? .milliseconds(250) : .milliseconds(120))
        }
    }

    // Look at how ManualRunner.run(_:) schedules its retry: the interval it turns retryInterval
    // into (whole seconds lose every shorter one, whole milliseconds the fraction, the seconds
    // part dropped loses the rest, a cap cuts a long one), the floor of a millisecond, and what
    // a second run(_:) for the same operation adds. Lesson: "Retrying with a timer".
    // Covers: C31
    // Paths: values, interference
    @Test(
        "a waiting operation is looked at no more than once every retryInterval, however often it was handed over",
        arguments: Interval.allCases)
    func looksOncePerInterval(interval: Interval) async {
        let runner = ManualRunner(retryInterval: interval.duration)
        let twice = ProbeOperation(readyWhen: { false })  // only a cancel makes them ready
        let once = ProbeOperation(readyWhen: { false })
        runner.run(twice)
        runner.run(twice)
        runner.run(once)
        defer {
            twice.cancel()  // the runner finishes them at its next look, and stops
            once.cancel()
        }
        if !interval.outlastsTheWindow {
            let handedOver = once.readinessChecks
            let looked = await waitUntil(
                "the runner to look again at a waiting operation",
                timeout: Chapter4Bound.retry + interval.duration * 2,
                hint: """
                    Nothing looked at it again after run(_:) returned. A Timer scheduled on a thread \
                    whose run loop never runs never fires. \(lesson.see("Retrying with a timer"))
                    """
            ) { once.readinessChecks > handedOver }
            guard looked else { return }
        }
        // A window counts only when the spec's own 1 ms timer kept pace in it: on a starved
        // machine a too-short timer fires no more often than a right one, so measure again.
        let ticker = PaceTicker()
        for _ in 1...Chapter4Bound.paceWindows {
            // The clock starts before the counts, so a spec held up in between allows more.
            let clock = ContinuousClock()
            let began = clock.now
            let start = (twice: twice.readinessChecks, once: once.readinessChecks, ticks: ticker.count)
            // Measured against the time that really passed: the spec itself may be held up too.
            let allowed = { (elapsed: Duration) in
                Int(elapsed / interval.atLeast) + interval.extraLooks
            }
            // The operation handed over twice may have had a first look left by each hand-over.
            var spunOnce = false
            let spun = await comesTrue(within: interval.window) {
                spunOnce = once.readinessChecks - start.once > allowed(clock.now - began)
                return spunOnce || twice.readinessChecks - start.twice > allowed(clock.now - began) + 1
            }
            let looksOnce = once.readinessChecks - start.once
            let looksTwice = twice.readinessChecks - start.twice
            let elapsed = clock.now - began
            let milliseconds = Int(elapsed / .milliseconds(1))
            #expect(
                spunOnce || !spun,
                """
                With \(interval.rawValue), the runner looked \(looksTwice) times in \(milliseconds) ms \
                at an operation handed to run(_:) twice (at most \(allowed(elapsed) + 1) allowed), \
                and \(looksOnce) times at one handed over once. A second run(_:) made a second retry \
                for the same operation: every hand-over adds a timer's worth of looks. Keep one \
                retry per operation, found by identity. \(lesson.see("Retrying with a timer"))
                """)
            #expect(
                !spun || !spunOnce,
                """
                With \(interval.rawValue), the runner looked \(looksOnce) times in \(milliseconds) ms \
                at an operation that was not ready (at most \(allowed(elapsed)) allowed): its timer \
                fires more often than every retryInterval. A Duration turned into whole seconds, or \
                into a DispatchTimeInterval that drops its fraction, makes every interval under a \
                second a timer that fires at once, again and again: a core spent on looks. Whole \
                milliseconds drop the fraction of a millisecond, a Duration read from its \
                attoseconds alone drops its whole seconds, and a cap cuts a long interval. Keep \
                every part (seconds and attoseconds, in nanoseconds), and raise anything under a \
                millisecond to one. \
                \(lesson.see("Retrying with a timer"))
                """)
            guard !spun else { return }
            // Two timers starved unevenly drift apart: compare them only when timers kept pace.
            guard interval.outlastsTheWindow || ticker.keptPace(since: start.ticks, over: elapsed)
            else { continue }
            #expect(
                looksTwice <= looksOnce + 3 + looksOnce / 4,
                """
                With \(interval.rawValue), in the same \(milliseconds) ms the runner looked \
                \(looksTwice) times at an operation handed to run(_:) twice and \(looksOnce) times \
                at one handed over once. A second run(_:) made a second retry for the same \
                operation: every hand-over adds a timer's worth of looks. Keep one retry per \
                operation, found by identity. \(lesson.see("Retrying with a timer"))
                """)
            return
        }
    }

    // Look at how ManualRunner turns a long retryInterval into its timer's interval: a cap of a
    // second or so shows only in a window longer than the cap. Lesson: "Retrying with a timer".
    // Covers: C29, C31
    // Paths: values
    @Test("a retryInterval of 30 s is kept whole: no look comes in the first second and a half")
    func longIntervalIsKeptWhole() async {
        let runner = ManualRunner(retryInterval: .seconds(30))
        let waiting = ProbeOperation(readyWhen: { false })  // only a cancel makes it ready
        runner.run(waiting)
        // A first look made inside run(_:) is over; one left to the runner's queue may come once.
        let handedOver = waiting.readinessChecks
        let allowed = handedOver > 0 ? 0 : 1
        let clock = ContinuousClock()
        let began = clock.now
        let window = Bound.scaled(.milliseconds(1_500))
        let lookedEarly = await comesTrue(within: window) {
            waiting.readinessChecks - handedOver > allowed
        }
        let milliseconds = Int((clock.now - began) / .milliseconds(1))
        #expect(
            !lookedEarly,
            """
            Expected no look at a waiting operation within \(Int(window / .milliseconds(1))) ms of \
            run(_:) with a retryInterval of 30 s; the runner looked again after \(milliseconds) ms \
            (\(waiting.readinessChecks - handedOver) looks since run(_:) returned). A cap on the \
            interval (a second, a minute, any bound) cuts a long retryInterval short, so the \
            runner looks more often than it was asked to. Turn the whole Duration into the timer's \
            interval, seconds and attoseconds, with a floor of a millisecond and no ceiling. \
            \(lesson.see("Retrying with a timer"))
            """)
        // Retire it now rather than at the next look, 30 s away.
        waiting.cancel()
        runner.perform(waiting)
        await waitUntil(
            "a waiting operation that was cancelled and handed to perform(_:) to finish",
            hint: """
                perform(_:) of a cancelled operation must call its start(): the default start() \
                skips main() and moves the operation to finished. Flags of the runner's own do not \
                finish the operation. \(lesson.see("Cancelled operations"))
                """
        ) { waiting.isFinished }
    }

    /// Hands `operation` to a runner that nobody keeps once this returns; returns a weak
    /// reference to that runner.
    static func runOnARunnerLetGo(_ operation: Operation) -> WeakReference<ManualRunner> {
        let runner = ManualRunner(retryInterval: Self.interval)
        runner.run(operation)
        return WeakReference(runner)
    }

    // Look at what ManualRunner.run(_:)'s retry holds, and what the runner does with its
    // retries when its last owner lets go of it. Lesson: "Retrying with a timer".
    // Covers: C31
    // Paths: memory, collaborators
    @Test(
        "an operation still waiting when the caller lets go of the runner is started once ready, and the runner is freed afterwards"
    )
    func waitingOutlivesTheRunner() async {
        let ready = Protected(false)
        let runs = Protected(0)
        let operation = ProbeOperation(readyWhen: { ready.value }, work: { runs.withValue { $0 += 1 } })
        let runner = Self.runOnARunnerLetGo(operation)
        ready.withValue { $0 = true }
        let started = await waitUntil(
            "the operation to start once ready, after the caller let go of the runner",
            timeout: Chapter4Bound.retry,
            hint: """
                Nothing retried it. A Timer scheduled on a thread whose run loop never runs never \
                fires. \(lesson.see("Retrying with a timer"))
                """,
            givingUpWhen: {
                runner.value == nil && runs.value == 0
                    ? """
                    the runner was freed as soon as the caller let go of it, and its retries went \
                    with it: run(_:) promised to start the operation once ready, and nobody will. \
                    Let each retry keep the runner (capture it strongly) until its operation has \
                    started or finished; the runner is freed after the last one. \
                    \(lesson.see("Retrying with a timer"))
                    """ : nil
            }
        ) { runs.value == 1 }
        defer { operation.cancel() }
        guard started else { return }
        await waitUntil(
            "the runner to be freed once its last retry ended, since nobody else held it",
            hint: """
                The operation has run, yet something still holds the runner: a retry that was \
                never stopped (a timer not cancelled keeps its handler, and the handler the \
                runner), or a cycle between the runner and something it keeps that no stop \
                breaks. Once an operation has started, cancel its retry and forget it. \
                \(lesson.see("Retrying with a timer"))
                """
        ) { runner.value == nil }
    }

    /// When the operation is handed to the runner a second time.
    enum SecondHandOver: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case whileWaiting = "handed over twice, and offered to a queue, while it waits for its dependency"
        case afterItRan = "handed over again after it ran"
        case startedByTheCaller =
            "handed to run(_:) while not ready, then started by the caller's perform(_:) before the runner looked again"

        var testDescription: String { rawValue }
    }

    // Look at ManualRunner.run(_:) and perform(_:) when the same operation comes twice: the
    // retries they keep, and when they stop (whoever started the operation), the checks before
    // start(), and enqueue(_:on:) for an operation still being retried. Lessons: "Retrying with
    // a timer", "Who owns an operation".
    // Covers: C28, C31, C34
    // Paths: reuse, collaborators
    @Test("an operation handed over twice is started once", arguments: SecondHandOver.allCases)
    func startedOnce(when: SecondHandOver) async {
        let runner = ManualRunner(retryInterval: Self.interval)
        // For the caller's perform(_:), ready only on the caller's thread until it has started:
        // the runner's own looks find it not ready, so the caller is the one to start it.
        let onlyForTheCaller = Protected(false)
        let caller = Protected<ObjectIdentifier?>(nil)
        let started = Protected(false)
        let operation = ProbeOperation(
            readyWhen: {
                !onlyForTheCaller.value || started.value || caller.value == currentThreadIdentity()
            },
            onStart: { _ in started.withValue { $0 = true } })
        switch when {
        case .whileWaiting:
            let dependency = BlockOperation {}
            operation.addDependency(dependency)
            runner.run(operation)
            runner.run(operation)
            let queue = OperationQueue()
            #expect(
                !runner.enqueue(operation, on: queue),
                """
                enqueue(_:on:) returned true for an operation the runner was still retrying: the \
                runner has promised to start it, so a queue must not get it too. Refuse an \
                operation you are retrying. \(lesson.see("Who owns an operation"))
                """)
            dependency.start()
        case .afterItRan:
            runner.run(operation)
            await waitUntil("the runner to run the ready operation") { operation.isFinished }
            await waitUntil("the runner to be done with the operation") { runner.waitingCount == 0 }
            runner.perform(operation)  // first: a start() it makes happens before it returns
            runner.run(operation)
        case .startedByTheCaller:
            onlyForTheCaller.withValue { $0 = true }  // and no caller yet
            runner.run(operation)
            let looked = operation.readinessChecks
            let lookedAgain = await waitUntil(
                "the runner to look again at the operation, which was not ready for it",
                timeout: Chapter4Bound.retry
            ) { operation.readinessChecks > looked }
            guard lookedAgain else { return }
            caller.withValue { $0 = currentThreadIdentity() }
            // Called again while a look of the runner has it claimed: that look leaves it alone.
            let ran = settles(within: Bound.standard) {
                runner.perform(operation)
                return operation.isFinished
            }
            #expect(
                ran,
                """
                perform(_:) did not run to the end an operation that was ready for it while \
                run(_:) was retrying it. \(lesson.see("Starting by hand"))
                """)
        }
        let settled = await waitUntil(
            "the runner to run the operation and stop retrying it",
            timeout: Chapter4Bound.retry,
            hint: operation.isFinished
                ? Self.stillRetried(when, waitingCount: runner.waitingCount)
                : "waitingCount stayed \(runner.waitingCount). \(lesson.see("Retrying with a timer"))"
        ) { operation.isFinished && runner.waitingCount == 0 }
        guard settled else { return }
        #expect(
            operation.startCount == 1,
            """
            The operation was \(when.rawValue) and its start() was called \
            \(operation.startCount) times; it should be called exactly once. Leave alone an \
            operation that is executing or finished. \(lesson.see("Starting by hand"))
            """)
    }

    // Look at what ManualRunner keeps once its last retry has ended: a timer, a ticker or a flag
    // that still says "retrying" although nothing is, so that the next operation that waits
    // gets no retry at all. Lesson: "Retrying with a timer".
    // Covers: C31
    // Paths: reuse, collaborators
    @Test("a runner whose retries have all ended retries the next operation that waits")
    func retriesAgainOnceAllEnded() async {
        let runner = ManualRunner(retryInterval: Self.interval)
        for round in 1...2 {
            let ready = Protected(false)
            let operation = ProbeOperation(readyWhen: { ready.value })
            defer { operation.cancel() }  // the runner finishes it at its next look, and stops
            runner.run(operation)
            ready.withValue { $0 = true }
            let started = await waitUntil(
                "the runner to start waiting operation \(round) once it was ready",
                timeout: Chapter4Bound.retry,
                hint: """
                    \(round == 1 ? "The first operation that waited was never started." : """
                    The first operation waited, was started by a retry, and its retry ended; the \
                    second one, handed to the same runner afterwards, was never looked at again \
                    (waitingCount \(runner.waitingCount)). Something the first retry left behind \
                    still says "retrying": a ticker cancelled but kept, or a flag never reset. \
                    Stop and forget a retry together, so that the next one starts afresh.
                    """) \(lesson.see("Retrying with a timer"))
                    """
            ) { operation.runCount == 1 }
            guard started else { return }
            let forgotten = await waitUntil(
                "waitingCount to reach 0 once waiting operation \(round) ran",
                timeout: Chapter4Bound.retry,
                hint: "It is \(runner.waitingCount). \(lesson.see("Retrying with a timer"))"
            ) { runner.waitingCount == 0 }
            guard forgotten else { return }
        }
    }

    // Look at where ManualRunner keeps its retry interval, its timers and its books: in the
    // runner, or in a static or global that every runner shares, which the last runner made
    // sets for all. Lesson: "Retrying with a timer".
    // Covers: C31
    // Paths: interference, values
    @Test("two runners with different retry intervals each retry at their own pace")
    func twoRunnersRetryAtTheirOwnPace() async {
        LastWords.forget("twoRunners")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process should end normally. It stopped: two runners, one with a 2 s retry \
            interval and one with a short one, did not each retry at their own pace with their \
            own books. \(lesson.see("Retrying with a timer"))
            """
        ) {
            TwoRunners.keepTheirOwn()
        }
        LastWords.explain("twoRunners", outcome)
    }

    /// What a runner that keeps retrying a finished operation did wrong, case by case.
    static func stillRetried(_ when: SecondHandOver, waitingCount: Int) -> String {
        switch when {
        case .startedByTheCaller:
            """
            The caller's perform(_:) started the operation and it finished, yet waitingCount \
            stayed \(waitingCount): the retry run(_:) made goes on for ever, keeping the \
            operation and the runner. A retry ends once its operation has started or finished, \
            whoever started it: when a look finds it executing or finished, stop and forget the \
            retry. \(lesson.see("Retrying with a timer"))
            """
        case .whileWaiting, .afterItRan:
            """
            The operation had finished, and waitingCount stayed \(waitingCount): a finished \
            operation is done with. \(lesson.see("Retrying with a timer"))
            """
        }
    }
}

/// Two runners in one process, run in a child process of its own: a mistake that keeps a
/// runner's state in a static is set and reset by every runner the other specs make.
enum TwoRunners {
    /// A runner with a 2 s interval and one with a short interval, both made before either is
    /// handed an operation: each keeps its own pace, books and timer.
    static func keepTheirOwn() {
        let clock = ContinuousClock()
        let began = clock.now
        let slow = ManualRunner(retryInterval: .seconds(2))
        let fast = ManualRunner(retryInterval: RetryingSpecs.interval)
        let slowOperation = ProbeOperation(readyWhen: { false })
        slow.run(slowOperation)
        let looksAtHandOver = slowOperation.readinessChecks
        let ready = Protected(false)
        let fastOperation = ProbeOperation(readyWhen: { ready.value })
        fast.run(fastOperation)
        if slow.waitingCount != 1 || fast.waitingCount != 1 {
            LastWords.fail(
                "twoRunners",
                """
                Each runner was handed one operation that was not ready; their waitingCount were \
                \(slow.waitingCount) and \(fast.waitingCount), expected 1 and 1. The runners \
                share their books: keep them in the runner, not in a static.
                """)
        }
        ready.withValue { $0 = true }
        guard settles(within: Chapter4Bound.retry, { fastOperation.runCount == 1 }) else {
            LastWords.fail(
                "twoRunners",
                """
                The runner with the short interval never started its operation once it was ready \
                (waitingCount \(fast.waitingCount)), while a runner made before it, with a 2 s \
                interval, retried another: a timer or ticker shared by every runner, or \
                made only for the first, leaves the second without retries.
                """)
        }
        // Its first look is due 2 s after run(_:): none may come before, with or without a runner beside it.
        let lookedEarly = settles(within: Chapter4Bound.quietPeriod) {
            slowOperation.readinessChecks > looksAtHandOver
        }
        let looks = slowOperation.readinessChecks - looksAtHandOver
        let elapsed = clock.now - began
        guard elapsed < .milliseconds(1_500) else { return }  // too late to tell: its look may be due
        if lookedEarly {
            LastWords.fail(
                "twoRunners",
                """
                The runner with a 2 s interval looked \(looks) times in \(Int(elapsed / .milliseconds(1))) ms \
                at its waiting operation once a runner with a shorter interval had been made: the \
                last runner's interval is used by all. Keep the interval in the runner that was \
                given it.
                """)
        }
        slowOperation.cancel()
    }
}
