import Chapter2
import Foundation
import KataTestSupport
import Testing

@Suite("A block operation is finished only when every one of its blocks is")
struct BlockOperationGroups {
    // Every piece must be a block of the one operation (addExecutionBlock), so the operation
    // counts as finished only after the last block returns. A completion block runs after
    // the operation has already finished.
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

    // Blocks can only be added before the operation runs (adding later traps), so a batch
    // takes pieces until it is submitted and refuses them afterwards with an error.
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
    // The first step gives the second up to half a second to start. On a serial queue it never can,
    // so the log stays in order; on a concurrent queue the two overlap.
    // Covers: C15
    @Test(
        "each step starts only after the one before it has ended, in the order they were handed in")
    func oneAfterAnother() async throws {
        let steps = OrderedSteps(label: "kata.chapter2.steps")
        let log = Recorder<String>()
        let secondStarted = Gate("step 2 started")
        steps.run {
            log.record("1 starts")
            secondStarted.wait(timeout: .milliseconds(500))
            log.record("1 ends")
        }
        steps.run {
            log.record("2 starts")
            secondStarted.open()
            log.record("2 ends")
        }
        steps.run {
            log.record("3 starts")
            log.record("3 ends")
        }
        await waitUntil("all three steps to end") { log.count == 6 }

        let expected = ["1 starts", "1 ends", "2 starts", "2 ends", "3 starts", "3 ends"]
        #expect(
            log.all == expected,
            """
            Expected the steps one after another: \(expected.joined(separator: " → ")); \
            they ran as: \(log.timeline).
            \(lesson.see("When order matters"))
            """)
    }
}
