import Chapter2
import Foundation
import KataTestSupport
import Testing

/// The ways an operation's run can end, for specs that look at what stays behind.
enum RunExit: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case returned, threw, cancelledBeforeItRan, cancelledWithTheRest

    var testDescription: String {
        switch self {
        case .returned: "the method returned"
        case .threw: "the method threw"
        case .cancelledBeforeItRan: "cancelled before it ran"
        case .cancelledWithTheRest: "cancelled by cancelAllOperations()"
        }
    }
}

@Suite("Each operation answers for itself alone, and nothing keeps it once it is done", .watched)
struct EachOperationStandsAlone {
    // Hint: InvocationOperation.cancel() and result(), "Results, cancellation and errors".
    // Where is "cancelled" kept, and whose is it: this operation's, or its target's?
    // Covers: C13
    // Paths: interference
    @Test("cancelling one operation leaves another on the same object alone: it still runs and returns its value")
    func cancellingOneLeavesTheOther() async {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let cancelled = InvocationOperation(target: pantry, method: Pantry.count, argument: "rye")
        let other = InvocationOperation(target: pantry, method: Pantry.count, argument: "sorghum")
        pantry.created.open()
        cancelled.cancel()
        queue.addOperation(cancelled)
        queue.addOperation(other)
        await waitUntil("both operations to finish") { cancelled.isFinished && other.isFinished }

        let answers = (cancelled: Answer(asking: cancelled), other: Answer(asking: other))
        #expect(
            answers.cancelled == .invocationError(.cancelled) && answers.other == .value(7),
            """
            Two operations called methods of one pantry; only the first was cancelled. Expected \
            the first to throw InvocationError.cancelled and the second to return 7, what \
            count(sorghum) returns; the first \(answers.cancelled), the second \(answers.other) \
            (calls: \(pantry.calls.timeline)). Cancelling is a fact about one operation: kept \
            anywhere shared (by target, in a static), it reaches operations nobody cancelled.
            \(lesson.see("Results, cancellation and errors"))
            """)
    }

    // Hint: InvocationOperation.main() and result(), "Results, cancellation and errors". Where
    // does a finished operation keep its outcome, and can a new operation find it there?
    // Covers: C13
    // Paths: memory, interference
    @Test(
        "a new operation has no result and is not cancelled until it runs, however many finished or cancelled operations were let go before it",
        arguments: [RunExit.returned, .cancelledBeforeItRan])
    func newOperationStartsEmpty(after exit: RunExit) async {
        // On a thread of its own: 200 rounds of waiting for a queue, one after another, would
        // hold one of the few threads every async spec of the run shares.
        guard
            let (answers, stuck) = await callOnItsOwnThread(
                "200 rounds of retiring an operation and asking a new one",
                timeout: Bound.standard * 2,
                hint: lesson.see("Results, cancellation and errors"),
                { Self.askNewOperationsAfterFinishedOnes(rounds: 200, cancelled: exit != .returned) })
        else { return }
        let wrong = answers.filter { $0 != .invocationError(.notFinished) }
        #expect(
            stuck == nil && wrong.isEmpty,
            """
            200 times, an operation (\(exit.testDescription)) was retired by the queue and let go, \
            then a new one was made and asked for its result before any queue had it. Expected \
            InvocationError.notFinished each time; \
            \(stuck.map { "round \($0)'s operation never finished; " } ?? "")\(wrong.count) \
            answered otherwise (\(Set(wrong.map(\.description)).sorted().joined(separator: ", "))). \
            A new object often gets the address of one just freed, so an outcome or a cancellation \
            kept by ObjectIdentifier, or anywhere outside the operation, turns up as a stranger's.
            \(lesson.see("Results, cancellation and errors"))
            """)
    }

    /// Retires an operation (run, or cancelled first) and lets it go, then asks a new one, `rounds` times.
    static func askNewOperationsAfterFinishedOnes(rounds: Int, cancelled: Bool) -> (answers: [Answer], stuck: Int?) {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        pantry.created.open()
        var answers: [Answer] = []
        for round in 1...rounds {
            do {
                let finished = InvocationOperation(target: pantry, method: Pantry.count, argument: "teff")
                if cancelled {
                    // Started by hand, a cancelled operation finishes at once on this thread, as
                    // a queue would retire it, without waiting for a thread of the queue's.
                    finished.cancel()
                    finished.start()
                } else {
                    queue.addOperation(finished)
                }
                guard settles(within: Bound.standard, { finished.isFinished }) else { return (answers, round) }
            }
            let fresh = InvocationOperation(target: pantry, method: Pantry.count, argument: "kamut")
            answers.append(Answer(asking: fresh))
        }
        return (answers, nil)
    }

    // Hint: InvocationOperation, "Results, cancellation and errors". What does your operation
    // keep, and does anything it keeps keep the operation? Foundation never calls main() of an
    // operation cancelled before it started.
    // Covers: C11, C13
    // Paths: memory
    @Test(
        "whether the method returned or threw, or the operation was cancelled alone or with the rest, it answers for that exit, and once the queue is done with it and nobody holds it, it is freed",
        arguments: RunExit.allCases)
    func operationIsFreed(after exit: RunExit) async {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let freed: WeakReference<Pantry.Invocation>
        do {
            let method: Pantry.Invocation.Method
            if exit == .threw { method = Pantry.restock } else { method = Pantry.count }
            let operation = InvocationOperation(target: pantry, method: method, argument: "quinoa")
            freed = WeakReference(operation)
            pantry.created.open()
            switch exit {
            case .returned, .threw:
                queue.addOperation(operation)
            case .cancelledBeforeItRan:
                operation.cancel()
                queue.addOperation(operation)
            case .cancelledWithTheRest:
                queue.isSuspended = true
                queue.addOperation(operation)
                queue.cancelAllOperations()
                queue.isSuspended = false
            }
            await waitUntil("the operation to finish (\(exit.testDescription))") { operation.isFinished }
            let expected: (answer: Answer, calls: [String]) =
                switch exit {
                case .returned: (.value(6), ["count(quinoa) on the queue"])
                case .threw: (.pantryError(.soldOut("quinoa")), ["restock(quinoa) on the queue"])
                case .cancelledBeforeItRan, .cancelledWithTheRest: (.invocationError(.cancelled), [])
                }
            let answer = Answer(asking: operation)
            #expect(
                answer == expected.answer && pantry.calls.all.map(\.description) == expected.calls,
                """
                Expected the operation (\(exit.testDescription)) to make the calls \
                \(expected.calls.isEmpty ? "none" : expected.calls.joined(separator: ", ")) and then \
                result() to answer “\(expected.answer)”; the calls were \(pantry.calls.timeline), and \
                result() \(answer).
                \(lesson.see("Results, cancellation and errors"))
                """)
        }
        guard
            await waitUntil(
                "the operation to be freed once it finished (\(exit.testDescription)) and nothing held it",
                hint: """
                    The queue let go of the finished operation and the spec holds none, yet it is still \
                    alive: something it keeps keeps it, such as a stored closure that captures the \
                    operation itself (a cycle that only main() breaks, and a cancelled operation never \
                    runs main()). Calls: \(pantry.calls.timeline).
                    \(lesson.see("Results, cancellation and errors"))
                    """,
                { freed.value == nil })
        else { return }
        guard exit == .returned else { return }
        // A method that returns an object: the result is the operation's own, so once the
        // operation is freed and the caller let go of what result() gave it, nothing keeps it.
        let parcelFreed: WeakReference<Parcel>
        let packerFreed: WeakReference<InvocationOperation<Packer, String, Parcel>>
        do {
            let operation = InvocationOperation(target: Packer(), method: Packer.pack, argument: "quinoa")
            packerFreed = WeakReference(operation)
            queue.addOperation(operation)
            guard await waitUntil("the operation that packs quinoa to finish", { operation.isFinished }) else { return }
            guard let parcel = try? operation.result() else {
                Issue.record("The operation that packs quinoa finished, but result() gave no parcel.")
                return
            }
            parcelFreed = WeakReference(parcel)
        }
        guard
            await waitUntil(
                "the operation that packed quinoa to be freed once it finished and nothing held it",
                { packerFreed.value == nil })
        else { return }
        await waitUntil(
            "the parcel a finished operation returned to be freed with the operation",
            hint: """
                The operation that packed quinoa was freed, and nobody kept the parcel its method \
                returned, yet the parcel is still alive: something outside the operation keeps its \
                result, such as a table of every outcome that is never emptied. The result belongs to \
                its operation alone.
                \(lesson.see("Results, cancellation and errors"))
                """
        ) { parcelFreed.value == nil }
    }
}

/// What `Packer.pack` returns: an object, so that a spec can see whether anything still keeps it.
final class Parcel: Sendable {
    let label: String
    init(label: String) { self.label = label }
}

/// A target whose method returns a new object each time.
final class Packer: Sendable {
    func pack(_ item: String) -> Parcel {
        Parcel(label: item)
    }
}
