import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("The runner keeps an operation only while it is responsible for it", .watched)
struct BookkeepingSpecs {
    /// How an operation's time with the runner ends.
    enum Exit: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case performed = "perform(_:) ran it"
        case retried = "run(_:) retried it until it was ready, then ran it"
        case cancelledWhileWaiting = "it was cancelled while run(_:) retried it"
        case queued = "enqueue(_:on:) put it in a queue, which ran it"
        case cancelledInQueue = "enqueue(_:on:) put it in a suspended queue, where it was cancelled"
        case cancelledWithEverything =
            "enqueue(_:on:) put it in a suspended queue, whose cancelAllOperations() cancelled everything in it"
        case blockSetAfterQueued = "enqueue(_:on:) put it in a queue, and its caller set its completion block only then"
        case cancelledBeforeQueued = "it was cancelled before anyone started it, then enqueue(_:on:) put it in a queue"

        var testDescription: String { rawValue }

        /// Whether the operation's time with the runner ends in a queue.
        var queues: Bool {
            switch self {
            case .performed, .retried, .cancelledWhileWaiting: false
            case .queued, .cancelledInQueue, .cancelledWithEverything, .blockSetAfterQueued,
                .cancelledBeforeQueued:
                true
            }
        }
    }

    /// What became of an operation once its time with the runner ended and the spec let go of it.
    enum Outcome: Sendable {
        /// The operation never got to the end the case asked for: `why` says what was missing.
        case neverEnded(String)
        /// Something still held the operation once it had ended and the spec let go of it.
        case stillHeld
        /// A new operation took its place in memory, and `perform(_:)` answered and ran it so.
        case replaced(handled: Bool, runs: Int)
        /// No new operation took its place within the tries: the platform's allocator did not
        /// reuse the address, so the spec cannot judge that part here.
        case notReplaced
    }

    /// Ends `exit` for an operation, lets go of it on this thread, and makes new operations
    /// until one is where the freed one was, then hands that one to `perform(_:)`.
    ///
    /// Everything happens on one thread without suspending: the allocator hands a freed block
    /// back first to the thread that freed it.
    static func endAndReplace(_ exit: Exit, on runner: ManualRunner) -> Outcome {
        let ready = Protected(exit != .retried && exit != .cancelledWhileWaiting)
        var operation: ProbeOperation? = ProbeOperation(readyWhen: { ready.value })
        let address = operation.map(ObjectIdentifier.init)
        if let why = end(exit, of: operation, on: runner, makeReady: { ready.withValue { $0 = true } }) {
            return .neverEnded(why)
        }
        // The queue and the retry let go of it on their own threads, a moment after it finished.
        guard settles(within: Bound.standard, { isKnownUniquelyReferenced(&operation) }) else {
            return .stillHeld
        }
        operation = nil  // freed here, on this thread
        var others: [ProbeOperation] = []
        for _ in 0..<200 {
            let fresh = ProbeOperation()
            if ObjectIdentifier(fresh) == address {
                let handled = runner.perform(fresh)
                return .replaced(handled: handled, runs: fresh.runCount)
            }
            others.append(fresh)  // kept, so that the next one has an address of its own
        }
        return .notReplaced
    }

    /// Ends `exit` for `operation`; returns what went wrong, or nil once it ended as asked.
    ///
    /// It takes the operation as an optional and keeps no reference of its own once it returns.
    static func end(
        _ exit: Exit, of operation: ProbeOperation?, on runner: ManualRunner,
        makeReady: () -> Void
    ) -> String? {
        guard let operation else { return "no operation" }
        let ownCompletion = Protected(false)
        let queue = OperationQueue()
        let ended: Bool
        switch exit {
        case .performed:
            runner.perform(operation)
            ended = operation.isFinished
        case .retried, .cancelledWhileWaiting:
            runner.run(operation)
            if exit == .retried { makeReady() } else { operation.cancel() }
            ended = settles(within: Chapter4Bound.retry) {
                operation.isFinished && runner.waitingCount == 0
            }
        case .queued, .cancelledInQueue, .cancelledWithEverything, .blockSetAfterQueued,
            .cancelledBeforeQueued:
            let setBlock = { operation.completionBlock = { ownCompletion.withValue { $0 = true } } }
            if exit != .blockSetAfterQueued { setBlock() }
            if exit == .cancelledBeforeQueued { operation.cancel() }
            queue.isSuspended = true
            guard runner.enqueue(operation, on: queue) else {
                return exit == .cancelledBeforeQueued
                    ? """
                    enqueue(_:on:) refused it because it was cancelled, though nobody had started \
                    it: cancelled is not started, and only a start() moves it to finished, which a \
                    queue does for it. Refused, it never finishes, and whatever depends on it never \
                    runs. Refuse only what has started, what you retry, and what you queued
                    """
                    : "enqueue(_:on:) refused it, though nobody had started it or handed it over"
            }
            switch exit {
            case .cancelledInQueue: operation.cancel()
            case .cancelledWithEverything: queue.cancelAllOperations()
            case .blockSetAfterQueued: setBlock()  // the caller's to set, whenever it likes
            default: break
            }
            queue.isSuspended = false
            ended = settles(within: Bound.standard) { operation.isFinished && ownCompletion.value }
        }
        guard !ended else { return nil }
        switch exit {
        case .performed:
            return "it had not finished when perform(_:) returned"
        case .retried, .cancelledWhileWaiting:
            return "it never finished, or waitingCount stayed above 0"
        case .queued, .cancelledInQueue, .cancelledWithEverything, .blockSetAfterQueued,
            .cancelledBeforeQueued:
            return operation.isFinished
                ? """
                the completion block its caller gave it never ran once it finished: \
                enqueue(_:on:) put its own in its place. The completion block is the \
                caller's; remember queued operations without touching them
                """
                : "it never finished"
        }
    }

    // Look at what ManualRunner keeps of an operation, and for how long: its retries, its book
    // of queued operations (strong references, or ObjectIdentifier keys that outlive the object
    // they named, or that something of the caller's, a cancel or a completion block, can keep
    // from being cleared), what it refuses to queue, and whatever it sets on the operation.
    // Lessons: "Who owns an operation", "Retrying with a timer".
    // Covers: C31, C34
    // Paths: memory, collaborators
    @Test(
        "once the runner is done with an operation it lets go of it and leaves its completion block, and a new operation at its address is new",
        arguments: Exit.allCases)
    func doneWithIsForgotten(exit: Exit) async {
        let runner = ManualRunner(retryInterval: Chapter4Bound.retryInterval)
        let outcome = Protected<Outcome?>(nil)
        Thread.detachNewThread {
            let result = Self.endAndReplace(exit, on: runner)
            outcome.withValue { $0 = result }
        }
        let returned = await waitUntil(
            "the operation to end and be replaced (\(exit.rawValue))",
            timeout: Bound.standard * 3
        ) { outcome.value != nil }
        guard returned, let result = outcome.value else { return }
        switch result {
        case .neverEnded(let why):
            Issue.record(
                """
                The spec handed the runner an operation (\(exit.rawValue)), but \(why). \
                \(exit == .retried || exit == .cancelledWhileWaiting ? "Nothing retried it, or the retry never stopped: a Timer scheduled on a thread whose run loop never runs never fires. \(lesson.see("Retrying with a timer"))" : lesson.see("Who owns an operation"))
                """)
        case .stillHeld:
            Issue.record(
                """
                Once \(exit.rawValue) and the spec let go of the operation, something still held \
                it: \(exit.queues ? "a book of queued operations that keeps them strongly, and never forgets one that finished" : "a book, a retry or a timer that outlived the operation's time with the runner"). \
                every operation handed over would stay in memory for as long as the runner \
                lives. Keep a queued operation only until it finishes (weakly, or removed once \
                finished), and stop and forget a retry once its operation has started. \
                \(lesson.see("Who owns an operation"))
                """)
        case .replaced(let handled, let runs):
            #expect(
                handled && runs == 1,
                """
                Once \(exit.rawValue), the operation was freed, and a new, ready operation was \
                made at the same address. perform(_:) returned \(handled) and ran it \(runs) \
                times; it should have started it at once. An ObjectIdentifier names an object only \
                while that object lives: a book that keeps identifiers after their operations \
                are gone takes a new operation for an old one. Forget an operation when the \
                runner is done with it, or keep it weakly and compare the object itself. \
                \(Self.clearedBy(exit))\(lesson.see("Who owns an operation"))
                """)
        case .notReplaced:
            break  // the allocator gave every new operation another address: nothing more to judge
        }
    }

    /// What keeps a book cleared by the caller's own collaborators from being cleared, for a
    /// failure message; empty where nothing of the caller's is involved.
    static func clearedBy(_ exit: Exit) -> String {
        switch exit {
        case .cancelledWithEverything:
            """
            An operation of the runner's own added to the caller's queue to clear the book once \
            it finishes is cancelled with everything else, and then never runs its block.
            """ + " "
        case .blockSetAfterQueued:
            """
            A completion block the runner chains to clear the book is gone once the caller sets \
            its own, as it may at any time: the block is the caller's.
            """ + " "
        default: ""
        }
    }
}
