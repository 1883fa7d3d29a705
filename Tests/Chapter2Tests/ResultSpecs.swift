import Chapter2
import Foundation
import KataTestSupport
import Testing

@Suite("Asking for a result that does not exist is an error the caller can catch", .watched)
struct AskingTooEarlyOrTooLate {
    // Hint: InvocationOperation.result(), "Results, cancellation and errors". What does it
    // answer before main() has run?
    // Covers: C13
    // Paths: reuse, collaborators
    @Test(
        "before the method has returned, result() throws notFinished; afterwards it returns the value, each time it is asked, in the caller's completion block too",
        .preflightAskingEarly)
    func beforeItFinished() async throws {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let operation = InvocationOperation(
            target: pantry, method: Pantry.count, argument: "barley")
        pantry.created.open()
        let whileRunning = Protected<Answer?>(nil)
        pantry.whileRunning {
            let answer = Answer(asking: operation)
            whileRunning.withValue { $0 = answer }
        }

        // A caller's own completion block, as an app sets one: it runs once the operation has
        // finished, so the result must be there by then.
        let inCompletionBlock = Protected<Answer?>(nil)
        operation.completionBlock = { [weak operation] in
            guard let operation else { return }
            let answer = Answer(asking: operation)
            inCompletionBlock.withValue { $0 = answer }
        }

        let beforeQueued = Answer(asking: operation)
        queue.addOperation(operation)
        await waitUntil("the operation to finish") { operation.isFinished }
        let afterwards = Answer(asking: operation)
        let askedAgain = Answer(asking: operation)
        await waitUntil(
            "the caller's completion block to run",
            hint: """
                The operation finished, but the completion block set before it was queued never \
                ran: the completion block belongs to whoever uses the operation, so \
                InvocationOperation must not set one of its own. \(lesson.see("Results, cancellation and errors"))
                """
        ) { inCompletionBlock.value != nil }

        #expect(
            beforeQueued == .invocationError(.notFinished)
                && whileRunning.value == .invocationError(.notFinished),
            """
            Expected result() to throw InvocationError.notFinished before the operation was queued \
            and while the method was still running; it \(beforeQueued) before, and \
            \(whileRunning.value.map(\.description) ?? "(was never asked)") while running \
            (calls: \(pantry.calls.timeline)).
            \(lesson.see("Results, cancellation and errors"))
            """)
        #expect(
            afterwards == .value(6) && askedAgain == .value(6),
            """
            Expected result() to return 6, what count(barley) returned, once the operation finished, \
            and again when asked a second time; it \(afterwards), then \(askedAgain). A finished \
            operation's result is part of its state: reading it must not use it up.
            \(lesson.see("Results, cancellation and errors"))
            """)
        #expect(
            inCompletionBlock.value == nil || inCompletionBlock.value == .value(6),
            """
            Expected result() to return 6 inside the caller's completion block, which runs once \
            the operation has finished; it \(inCompletionBlock.value.map(\.description) ?? "was never asked").
            \(lesson.see("Results, cancellation and errors"))
            """)
    }

    // Hint: InvocationOperation.main() and result(), "Results, cancellation and errors". A
    // cancelled operation that no queue has retired yet is not finished: which does result()
    // look at first?
    // Covers: C13
    @Test(
        "an operation cancelled before it ran never calls the method, and result() throws cancelled, before it is queued and after the queue retired it",
        .preflightAskingEarly)
    func cancelledBeforeItRan() async throws {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let operation = InvocationOperation(
            target: pantry, method: Pantry.count, argument: "millet")
        pantry.created.open()
        operation.cancel()
        let seenByFoundation = operation.isCancelled
        let beforeQueued = Answer(asking: operation)
        queue.addOperation(operation)
        await waitUntil("the queue to retire the cancelled operation") { operation.isFinished }

        let answer = Answer(asking: operation)
        #expect(
            beforeQueued == .invocationError(.cancelled) && answer == .invocationError(.cancelled),
            """
            Expected result() of a cancelled operation to throw InvocationError.cancelled, both \
            right after cancel(), before any queue had it (it is not finished then), and after the \
            queue retired it; it \(beforeQueued) before, and \(answer) after. A default value would \
            look like a real answer, and notFinished would make the caller wait for a result that \
            can never come.
            \(lesson.see("Results, cancellation and errors"))
            """)
        #expect(
            seenByFoundation,
            """
            Expected isCancelled to be true right after cancel(); it was false. A cancel() that \
            keeps a flag of its own must still call super.cancel(): the queue and every \
            dependent learn of the cancellation only from Foundation's flag, and an operation \
            that waits for its dependencies is started early only when that flag is set.
            \(lesson.see("Results, cancellation and errors"))
            """)
        #expect(
            pantry.calls.count == 0,
            """
            A cancelled operation must not call its method, but these calls happened: \
            \(pantry.calls.timeline).
            \(lesson.see("Running on the queue, not on the creator"))
            """)
    }

    // Hint: InvocationOperation.result(), "Results, cancellation and errors". Which does it
    // look at first: the stored value, whether the operation finished, or the cancellation flag?
    // Covers: C13
    @Test(
        "an operation cancelled while its method ran has no result: result() throws cancelled, while the method still runs and after it finished",
        .preflightAskingEarly)
    func cancelledWhileRunning() async throws {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let operation = InvocationOperation(target: pantry, method: Pantry.count, argument: "spelt")
        pantry.created.open()
        let whileRunning = Protected<Answer?>(nil)
        pantry.whileRunning {
            operation.cancel()
            let answer = Answer(asking: operation)
            whileRunning.withValue { $0 = answer }
        }
        queue.addOperation(operation)
        await waitUntil("the operation to finish") { operation.isFinished }

        let answer = Answer(asking: operation)
        #expect(
            whileRunning.value == .invocationError(.cancelled) && answer == .invocationError(.cancelled),
            """
            The operation was cancelled while count(spelt) ran (calls: \(pantry.calls.timeline)). \
            Expected result() to throw InvocationError.cancelled right after cancel(), while the \
            method was still running, and again once the operation finished; it \
            \(whileRunning.value.map(\.description) ?? "(was never asked)") while running, and \
            \(answer) after.
            \(lesson.see("Results, cancellation and errors"))
            """)
    }
}

@Suite("An error thrown by the method is kept and handed to whoever asks for the result", .watched)
struct ThrownErrors {
    // Hint: InvocationOperation.main(), "Results, cancellation and errors". Where does the
    // method's error go?
    // Covers: C16, C13
    // Paths: reuse
    @Test("the method's error comes out of result(), and the operation still finishes normally")
    func errorIsHandedOn() async throws {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let operation = InvocationOperation(
            target: pantry, method: Pantry.restock, argument: "yeast")
        pantry.created.open()
        let after = BlockOperation {}
        after.addDependency(operation)
        queue.addOperation(operation)
        queue.addOperation(after)
        await waitUntil(
            "the operation that depends on the throwing one to run",
            hint: "An operation that fails must still finish, or its dependents wait forever."
        ) { after.isFinished }

        let answer = Answer(asking: operation)
        let askedAgain = Answer(asking: operation)
        #expect(
            answer == .pantryError(.soldOut("yeast")) && askedAgain == answer,
            """
            restock(yeast) threw PantryError.soldOut("yeast") (calls: \(pantry.calls.timeline)). \
            Expected result() to throw that same error, each time it is asked; it \(answer), then \
            \(askedAgain). A dropped error looks \
            like "not finished" or a value; the caller must get the real reason.
            \(lesson.see("Results, cancellation and errors"))
            """)
        #expect(
            pantry.calls.all.map(\.onQueue) == [true],
            """
            Expected restock(yeast) to be called once, on the queue; calls: \(pantry.calls.timeline).
            \(lesson.see("Running on the queue, not on the creator"))
            """)
    }
}
