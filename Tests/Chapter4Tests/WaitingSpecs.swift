import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("Waiting for an operation started by hand does not burn a processor", .watched)
struct WaitingSpecs {
    /// How long the awaited operation is kept running while the waiter is watched.
    static let window: Duration = Bound.scaled(.milliseconds(150))

    /// The most reads of `isFinished` a wait may make while the operation keeps running.
    ///
    /// A blocking wait reads it once or twice, whatever the window; a loop reads it thousands of
    /// times, and a loop that sleeps a few milliseconds between reads still tens of times.
    static let allowedReads = 3

    /// The most processor time a wait may use over the whole window.
    ///
    /// A blocking wait uses well under a millisecond. A loop on any flag uses a core for the
    /// whole window when it has one, and still many times this bound when busy threads leave it
    /// a small share of a core.
    static let allowedCPU: Duration = Bound.scaled(.milliseconds(15))

    // Look at ManualRunner.wait(for:): what the thread does while the operation runs, and
    // what it leaves of the operation. Lesson: "Waiting without spinning".
    // Covers: C33
    // Paths: collaborators
    @Test(
        "wait(for:) sleeps until the operation finishes, without polling isFinished or replacing its completion block"
    )
    func waitingDoesNotPoll() async {
        let runner = ManualRunner()
        let release = Gate("the awaited operation's work")
        let operation = ConcurrentProbe(release: release)
        let ownCompletion = Gate("the completion block its caller gave the operation")
        operation.completionBlock = { ownCompletion.open() }
        operation.start()
        let waiting = Gate("the waiter")
        let measured = Protected<(cpu: Duration, wall: Duration)?>(nil)
        Thread.detachNewThread {
            operation.watchReadsOnThisThread()
            waiting.open()
            let cost = CPUTime.measure { runner.wait(for: operation) }
            measured.withValue { $0 = cost }
        }
        await waitUntil("the waiting thread to begin") { waiting.isOpen }
        let polled = await comesTrue(within: Self.window) {
            operation.watchedReads > Self.allowedReads || measured.value != nil
        }
        let reads = operation.watchedReads
        let returnedEarly = measured.value != nil
        release.open()
        await waitUntil(
            "wait(for:) to return once the operation had finished",
            hint: lesson.see("Waiting without spinning")
        ) { measured.value != nil }
        #expect(
            !returnedEarly,
            """
            wait(for:) returned while the operation was still executing; it should return only \
            once the operation has finished. \(lesson.see("Waiting without spinning"))
            """)
        #expect(
            !polled || returnedEarly,
            """
            wait(for:) read isFinished \(reads) times while the operation kept running (at most \
            \(Self.allowedReads) allowed): it polls. A loop on isFinished, with or without a sleep, \
            keeps waking up for nothing; block on waitUntilFinished() instead. \
            \(lesson.see("Waiting without spinning"))
            """)
        await waitUntil(
            "the completion block the operation was given to run once it had finished",
            hint: """
                The operation finished while wait(for:) blocked on it, but the completion block \
                its caller had given it never ran: wait(for:) put its own in its place. Waiting \
                must leave the operation as it was: block on waitUntilFinished(), or on a signal \
                from a dependent of the operation. \(lesson.see("Waiting without spinning"))
                """
        ) { ownCompletion.isOpen }
        guard let cost = measured.value else { return }
        #expect(
            cost.cpu <= Self.allowedCPU,
            """
            wait(for:) used \(Self.milliseconds(cost.cpu)) ms of processor time while it waited \
            \(Self.milliseconds(cost.wall)) ms for the operation; a blocking wait uses almost none \
            (at most \(Self.milliseconds(Self.allowedCPU)) ms allowed). A loop burns a core: block \
            on waitUntilFinished() instead. \(lesson.see("Waiting without spinning"))
            """)
    }

    /// How long a spec gives `wait(for:)` to return too early, before it lets the operation start.
    static let earlyWindow: Duration = Bound.scaled(.milliseconds(50))

    // Look at ManualRunner.wait(for:) for an operation that nobody has started yet: one that
    // run(_:) is still retrying, and whose caller gives it a completion block while the wait
    // is on. Lesson: "Waiting without spinning".
    // Covers: C33
    // Paths: collaborators
    @Test(
        "wait(for:) on an operation that run(_:) starts only later returns once it has finished, whatever completion block its caller sets meanwhile"
    )
    func waitingForOneNotStartedYet() async {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let ready = Protected(false)
        let operation = ProbeOperation(readyWhen: { ready.value })
        runner.run(operation)
        let waiting = Gate("the waiter")
        let finishedOnReturn = Protected<Bool?>(nil)
        Thread.detachNewThread {
            waiting.open()
            runner.wait(for: operation)
            finishedOnReturn.withValue { $0 = operation.isFinished }
        }
        defer {
            if !operation.isFinished {  // lets a waiter that loops on isFinished end
                operation.cancel()
                operation.start()
            }
        }
        await waitUntil("the waiting thread to begin") { waiting.isOpen }
        // A wait that sets a completion block of its own has set it by the time this ends.
        _ = await comesTrue(within: Self.earlyWindow) {
            finishedOnReturn.value != nil || operation.completionBlockSets > 0
        }
        let callersBlock = Gate("the completion block the caller set while wait(for:) was on")
        operation.completionBlock = { callersBlock.open() }  // the caller's, set as it may
        ready.withValue { $0 = true }
        let returned = await waitUntil(
            "wait(for:) to return once the operation, which run(_:) started when it became ready, had finished",
            timeout: Chapter4Bound.retry,
            hint: operation.isFinished
                ? """
                The operation finished and its caller's completion block \
                \(callersBlock.isOpen ? "ran" : "did not run"), but wait(for:) did not return. \
                \(operation.completionBlockSets > 1 ? "wait(for:) set a completion block of its own, and the caller replaced it with theirs after the wait began, as a caller may: the block is the caller's (Apple's documentation of completionBlock), so a wait built on it never hears of the finish. Block on waitUntilFinished(), or on a signal from a dependent of the operation. " : "")\
                \(lesson.see("Waiting without spinning"))
                """
                : """
                Nothing started the operation once it was ready. A Timer scheduled on a thread \
                whose run loop never runs never fires. \(lesson.see("Retrying with a timer"))
                """
        ) { finishedOnReturn.value != nil }
        guard returned, let finished = finishedOnReturn.value else { return }
        #expect(
            finished,
            """
            wait(for:) returned while the operation had not finished: run(_:) was still waiting \
            for it to become ready, so nobody had started it yet. "Not started yet" is not "nothing \
            to wait for": wait(for:) returns once the operation has finished, whoever starts it \
            and whenever. waitUntilFinished() does exactly that. \
            \(lesson.see("Waiting without spinning"))
            """)
    }

    /// The duration in whole milliseconds, for messages.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
