import Chapter2
import Foundation
import KataTestSupport
import Testing

@Suite("A block operation is finished only when every one of its blocks is")
struct BlockOperationGroups {
    // Hint: Batch.submit(to:), "Block operations". Which pieces belong to the operation, and
    // which run only after it has finished?
    // Covers: C14
    @Test("while any of the batch's pieces is still running, the batch's operation is not finished")
    func finishedOnlyWhenAllAre() async throws {
        let pieces = 3
        let queue = OperationQueue()
        let submitted = Gate("submit(to:) returned the operation")
        let operation = Protected<Operation?>(nil)
        let seen = Recorder<String>()
        let batch = Batch()
        for piece in 1...pieces {
            try batch.add {
                submitted.wait()
                let finished = operation.value?.isFinished ?? false
                seen.record("piece \(piece) ran, operation \(finished ? "FINISHED" : "unfinished")")
            }
        }
        let submittedOperation = batch.submit(to: queue)
        operation.withValue { $0 = submittedOperation }
        submitted.open()
        let seenByDependent = Protected<Int?>(nil)
        let dependent = BlockOperation { seenByDependent.withValue { $0 = seen.count } }
        dependent.addDependency(submittedOperation)
        queue.addOperation(dependent)
        await waitUntil("the operation that depends on the batch to run") { dependent.isFinished }
        await waitUntil("all \(pieces) pieces to run") { seen.count == pieces }

        #expect(
            seen.count == pieces && !seen.contains { $0.hasSuffix("FINISHED") },
            """
            Each piece looked at the batch's operation while it ran: \(seen.timeline). A piece \
            that runs after the operation has finished is not part of it.
            \(lesson.see("Block operations"))
            """)
        #expect(
            seenByDependent.value == pieces,
            """
            The operation that depends on the batch ran when \(seenByDependent.value ?? 0) of \
            \(pieces) pieces were done; it should run only after all of them.
            \(lesson.see("Block operations"))
            """)
    }

    // Hint: Batch.add(_:), "Block operations". What happens to a piece added after the batch
    // went to the queue?
    // Covers: C14
    @Test("pieces added before submitting all run; a piece added afterwards is refused, not lost")
    func addBeforeItRuns() async throws {
        let queue = OperationQueue()
        let ran = Recorder<String>()
        let batch = Batch()
        for name in ["wash", "chop", "simmer"] {
            try batch.add { ran.record(name) }
        }
        let operation = batch.submit(to: queue)
        var refusal: BatchError?
        do {
            try batch.add { ran.record("garnish") }
        } catch {
            refusal = error
        }
        await waitUntil("the batch's operation to finish") { operation.isFinished }

        #expect(
            refusal == .alreadySubmitted,
            """
            Expected add(_:) after submit(to:) to throw BatchError.alreadySubmitted; it \
            \(refusal.map { "threw \($0)" } ?? "threw nothing"), so the caller believes the \
            piece will run. Pieces that ran: \(ran.timeline).
            \(lesson.see("Block operations"))
            """)
        #expect(
            Set(ran.all).isSuperset(of: ["wash", "chop", "simmer"]),
            """
            Expected wash, chop and simmer, all added before submitting, to run as part of \
            the operation; pieces that ran: \(ran.timeline).
            \(lesson.see("Block operations"))
            """)
    }
}

@Suite("Steps that must run in order go to a serial queue")
struct StepsInOrder {
    // Hint: OrderedSteps.run, "When order matters". Which kind of queue runs one thing at a
    // time, first in, first out, whatever the priority?
    // Covers: C15, C47
    @Test("each step starts only after the one before it has ended, in the order handed in, even an urgent one")
    func oneAfterAnother() async throws {
        let steps = OrderedSteps(label: "kata.chapter2.steps")
        let log = Recorder<String>()
        let handedIn = Gate("all three steps handed in")
        let secondStarted = Gate("step 2 started")
        steps.run(priority: .low) {
            log.record("1 starts")
            handedIn.wait()
            // On a serial queue step 2 cannot start now; on a concurrent one it starts at once.
            secondStarted.wait(timeout: Bound.scaled(.milliseconds(100)))
            log.record("1 ends")
        }
        steps.run(priority: .normal) {
            log.record("2 starts")
            secondStarted.open()
            log.record("2 ends")
        }
        steps.run(priority: .veryHigh) {
            log.record("3 starts")
            log.record("3 ends")
        }
        handedIn.open()
        await waitUntil("all three steps to end") { log.count == 6 }

        let expected = ["1 starts", "1 ends", "2 starts", "2 ends", "3 starts", "3 ends"]
        #expect(
            log.all == expected,
            """
            Steps 1 (low priority), 2 (normal) and 3 (very high) were handed in in that order. \
            Expected them one after another: \(expected.joined(separator: " → ")); they ran as: \
            \(log.timeline). A concurrent queue overlaps them; an operation queue, even one \
            limited to one operation at a time, picks the next by priority.
            \(lesson.see("When order matters"))
            """)
    }
}
