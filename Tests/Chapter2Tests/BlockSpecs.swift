import Chapter2
import Foundation
import KataTestSupport
import Testing

/// A batch handed to a queue that runs each operation to its end before `addOperation` returns.
enum EagerQueueScenario {
    static let name = "batchOnAnEagerQueue"

    static func run() {
        exitIfStillRunning(after: Bound.standard * 3, status: EXIT_FAILURE)
        let queue = EagerQueue()
        let seen = Recorder<String>()
        let batch = Batch()
        for piece in ["wash", "chop", "simmer"] {
            do {
                try batch.add {
                    let finished = queue.handedIn.all.contains(where: \.isFinished)
                    seen.record("\(piece) ran, operation \(finished ? "FINISHED" : "unfinished")")
                }
            } catch {
                LastWords.fail(name, "add(_:) threw \(error) before the batch was submitted.")
            }
        }
        LastWords.note(
            name,
            """
            submit(to:) stopped the program. The queue ran the batch's operation to its end the \
            moment it was added, before the next line of submit(to:); adding a block to an \
            operation that has started or finished traps. Put every piece in first, then hand \
            the operation to the queue.
            """)
        let operation = batch.submit(to: queue)
        guard settles(within: Bound.standard, { seen.count == 3 }) else {
            LastWords.fail(
                name,
                """
                Of wash, chop and simmer, only these ran (waited \(Bound.standard.seconds) s): \
                \(seen.timeline). The queue ran the operation it was given at once; a piece put in \
                afterwards never runs.
                """)
        }
        guard !seen.contains(where: { $0.hasSuffix("FINISHED") }) else {
            LastWords.fail(
                name,
                """
                Each piece looked at the operation the queue was given while it ran: \
                \(seen.timeline). A piece that runs after the operation has finished is not part \
                of it.
                """)
        }
        guard settles(within: Bound.standard, { operation.isFinished }) else {
            LastWords.fail(name, "The operation submit(to:) returned never finished, although every piece ran.")
        }
    }
}

/// Something a piece of work captures, so that a spec can see whether the piece is still kept.
final class Garnish: Sendable {
    let name = "garnish"
}

@Suite("A block operation is finished only when every one of its blocks is", .watched)
struct BlockOperationGroups {
    // Hint: Batch.submit(to:), "Block operations". Which pieces belong to the operation, and
    // which run only after it has finished or beside it? Does a batch with no pieces reach
    // the queue too?
    // Covers: C14
    // Paths: values
    @Test(
        "while any of the batch's pieces is still running, the first, a middle or the last of three, or the last of ten, of a hundred or of a thousand, the batch's operation is not finished; a batch with no pieces (0) finishes at once",
        arguments: [0, 1, 2, 3, 10, 100, 1000])
    func finishedOnlyWhenAllAre(stillRunning slowPiece: Int) async throws {
        // 0: a batch with no pieces, whose operation has nothing to wait for; 10, 100 and 1000:
        // the last of ten, of a hundred or of a thousand pieces, more than a design that caps
        // the blocks per operation (at three, at sixteen, at 128) puts in one.
        let pieces = slowPiece == 0 ? 0 : max(3, slowPiece)
        let queue = OperationQueue()
        let submitted = Gate("submit(to:) returned the operation")
        let operation = Protected<Operation?>(nil)
        let seen = Recorder<String>()
        let seenByDependent = Protected<Int?>(nil)
        let dependent = BlockOperation { seenByDependent.withValue { $0 = seen.count } }
        let batch = Batch()
        for piece in 1..<(pieces + 1) {
            try batch.add {
                submitted.wait()
                if piece == slowPiece {
                    // The slow piece goes on until nothing else the queue holds for the batch is
                    // left unfinished: an operation that does not hold it has time to finish. With
                    // every piece in one operation, that operation is the only one at once.
                    _ = settles(within: Bound.standard) {
                        queue.operations.filter { !$0.isFinished && $0 !== dependent }.count <= 1
                    }
                }
                let finished = operation.value?.isFinished ?? false
                seen.record("piece \(piece) ran, operation \(finished ? "FINISHED" : "unfinished")")
            }
        }
        defer { submitted.open() }  // lets the pieces end even if submit(to:) never returned
        let handedOver = await submitOnItsOwnThread(batch, to: queue) { submittedOperation in
            operation.withValue { $0 = submittedOperation }
            submitted.open()
        }
        guard let submittedOperation = handedOver else { return }
        dependent.addDependency(submittedOperation)
        queue.addOperation(dependent)
        let dependentRan = await waitUntil(
            "the operation that depends on the batch of \(pieces) pieces to run",
            hint: pieces > 0
                ? ""
                : """
                A batch with no pieces has nothing left to do, so it is done at once: the \
                operation submit(to:) returns must finish (a queue finishes a block operation \
                with no blocks at once), or whatever depends on it waits forever.
                \(lesson.see("Block operations"))
                """
        ) { dependent.isFinished }
        await waitUntil("all \(pieces) pieces to run") { seen.count == pieces }

        #expect(
            seen.count == pieces && !seen.contains { $0.hasSuffix("FINISHED") },
            """
            Each piece looked at the batch's operation while it ran, piece \(slowPiece) after \
            the others had had time to end: \(seen.timeline). A piece that runs after the \
            operation has finished, or in an operation of its own, is not part of it.
            \(lesson.see("Block operations"))
            """)
        #expect(
            !dependentRan || seenByDependent.value == pieces,
            """
            The operation that depends on the batch ran when \(seenByDependent.value ?? 0) of \
            \(pieces) pieces were done; it should run only after all of them.
            \(lesson.see("Block operations"))
            """)
    }

    // Hint: Batch.submit(to:), "Block operations". This runs in a child process, because the
    // mistake it looks for stops the program: when is the operation complete, and when does
    // the queue get it?
    // Covers: C14
    // Paths: collaborators
    @Test("a queue may run the batch's operation the moment it is added: every piece is in it already")
    func completeBeforeItIsQueued() async {
        LastWords.forget(EagerQueueScenario.name)
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected a batch handed to a queue that runs each operation as soon as it is added \
            (any queue may) to run all its pieces as part of the operation it returns.
            \(lesson.see("Block operations"))
            """
        ) {
            EagerQueueScenario.run()
        }
        LastWords.explain(EagerQueueScenario.name, outcome)
    }

    // Hint: Batch.add(_:) and submit(to:), "Block operations". Does submit(to:) hand the
    // operation over and return, or wait for the pieces? What happens to a piece added after
    // the batch went to the queue?
    // Covers: C14
    // Paths: reuse, memory
    @Test(
        "submit(to:) returns at once, even while the queue cannot run the pieces yet; pieces added before submitting all run; a piece added afterwards is refused, not lost, and not kept"
    )
    func addBeforeItRuns() async throws {
        // A suspended queue holds the batch's operation back without holding a thread.
        let queue = OperationQueue()
        queue.isSuspended = true
        defer { queue.isSuspended = false }  // never leaves a waiting submit(to:) blocked
        let ran = Recorder<String>()
        let batch = Batch()
        for name in ["wash", "chop", "simmer"] {
            try batch.add { ran.record(name) }
        }
        let operation = await callOnItsOwnThread(
            "submit(to:), with the queue suspended so that no piece could run yet,",
            hint: """
                submit(to:) hands the batch's operation to the queue and returns it at once; the \
                caller waits for the pieces, if at all, through that operation (a dependent, a \
                completion block). One that waits inside submit(to:) blocks its caller for as long \
                as the pieces take, and for good when the queue cannot run them yet. Pieces that \
                ran meanwhile: \(ran.timeline).
                \(lesson.see("Block operations"))
                """
        ) { batch.submit(to: queue) }
        var refusal: BatchError?
        // The refused piece captures an object nothing else keeps, so once the batch lets go
        // of the piece, the object is freed.
        let keptByRefusedPiece: WeakReference<Garnish>
        do {
            let garnish = Garnish()
            keptByRefusedPiece = WeakReference(garnish)
            do {
                try batch.add { ran.record(garnish.name) }
            } catch {
                refusal = error
            }
        }
        let refusedPieceKept = withExtendedLifetime(batch) { keptByRefusedPiece.value != nil }
        queue.isSuspended = false
        if let operation {
            await waitUntil("the batch's operation to finish") { operation.isFinished }
        } else {
            // submit(to:) never returned the operation; the resumed queue still runs the pieces.
            await waitUntil("wash, chop and simmer to run, once the queue was resumed") {
                Set(ran.all).isSuperset(of: ["wash", "chop", "simmer"])
            }
        }

        #expect(
            refusal == .alreadySubmitted,
            """
            Expected add(_:) after submit(to:) to throw BatchError.alreadySubmitted; it \
            \(refusal.map { "threw \($0)" } ?? "threw nothing"), so the caller believes the \
            piece will run. Pieces that ran: \(ran.timeline).
            \(lesson.see("Block operations"))
            """)
        #expect(
            !refusedPieceKept,
            """
            Expected the batch to let go of the piece add(_:) refused after submit(to:); it \
            still kept it, and with it everything the piece captured, for as long as the batch \
            lives. Check "submitted" before the piece goes anywhere.
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

    // Hint: Batch.submit(to:), "Block operations". When does the batch count as submitted:
    // before it hands its operation to the queue, or only afterwards?
    // Covers: C14
    // Paths: collaborators, interference
    @Test(
        "a piece added while submit(to:) hands the batch's operation to the queue is refused, or runs as part of it: it is never taken and lost"
    )
    func addWhileHandingOver() async throws {
        let queue = HandOverQueue()
        let ran = Recorder<String>()
        let batch = Batch()
        try batch.add { ran.record("wash") }
        let lateAdd = Protected<String?>(nil)
        queue.whileHandingOver {
            let answer: String
            do {
                try batch.add { ran.record("chop") }
                answer = "took it"
            } catch {
                answer = "threw \(error)"
            }
            lateAdd.withValue { $0 = answer }
        }
        guard let operation = await submitOnItsOwnThread(batch, to: queue) else { return }
        await waitUntil("the batch's operation to finish") { operation.isFinished }

        #expect(
            lateAdd.value == "threw alreadySubmitted" || (lateAdd.value == "took it" && ran.contains("chop")),
            """
            chop was added while submit(to:) handed the batch's operation to the queue; add(_:) \
            \(lateAdd.value ?? "was never called (submit(to:) did not hand an operation to the queue)"), \
            and the pieces that ran were: \(ran.timeline). Expected BatchError.alreadySubmitted, \
            or chop to run as part of the operation. A batch that takes its pieces and marks \
            itself submitted in two steps accepts a piece in between that no operation will run: \
            set "submitted" in the same critical section that takes the pieces.
            \(lesson.see("Block operations"))
            """)
    }

    // Hint: Batch, "Block operations". Where does a batch keep whether it was submitted, and
    // can a new batch find an old one's "submitted" there?
    // Covers: C14
    // Paths: memory, interference
    @Test("a new batch takes pieces until it is submitted, however many submitted batches were let go before it")
    func newBatchStartsOpen() async {
        // On a thread of its own: 200 rounds of waiting for a queue, one after another, would
        // hold one of the few threads every async spec of the run shares.
        guard
            let (refused, takenLate) = await callOnItsOwnThread(
                "200 rounds of submitting a batch and making a new one",
                timeout: Bound.standard * 2,
                hint: lesson.see("Block operations"),
                { Self.submitNewBatchesAfterFreedOnes(rounds: 200) })
        else { return }
        #expect(
            refused == 0 && takenLate == 0,
            """
            200 times, a new batch was given a piece, submitted, given another piece, and let go. \
            Expected every new batch to take its first piece and refuse the one after submit(to:); \
            \(refused) refused the first, and \(takenLate) took the late one. A new object often \
            gets the address of one just freed, so "submitted" kept by ObjectIdentifier, or \
            anywhere outside the batch, closes batches nobody submitted.
            \(lesson.see("Block operations"))
            """)
    }

    /// Makes a batch, gives it a piece, submits it, waits for its operation, offers it one more
    /// piece and lets it go, `rounds` times on the calling thread; counts first pieces refused
    /// and late pieces taken.
    static func submitNewBatchesAfterFreedOnes(rounds: Int) -> (refused: Int, takenLate: Int) {
        let queue = OperationQueue()
        var (refused, takenLate) = (0, 0)
        for _ in 1...rounds {
            let batch = Batch()
            do {
                try batch.add {}
            } catch {
                refused += 1
            }
            let operation = batch.submit(to: queue)
            _ = settles(within: Bound.standard) { operation.isFinished }
            do {
                try batch.add {}
                takenLate += 1
            } catch {}
        }
        return (refused, takenLate)
    }

    // Hint: Batch, "Block operations". Where does a batch keep whether it was submitted, and
    // whose is it?
    // Covers: C14
    // Paths: interference
    @Test("submitting one batch leaves another open: it still takes pieces, and runs them as its own")
    func batchesAreIndependent() async throws {
        // A suspended queue holds both operations back until the spec knows them.
        let queue = OperationQueue()
        queue.isSuspended = true
        defer { queue.isSuspended = false }
        let ran = Recorder<String>()
        let operations = Protected<[String: Operation]>([:])
        func piece(_ batch: String, _ name: String) -> @Sendable () -> Void {
            {
                let finished = operations.value[batch]?.isFinished ?? false
                ran.record("\(batch): \(name)\(finished ? " (its operation FINISHED)" : "")")
            }
        }
        let first = Batch()
        let second = Batch()
        try first.add(piece("first", "wash"))
        try second.add(piece("second", "chop"))
        guard let firstOperation = await submitOnItsOwnThread(first, to: queue) else { return }
        var refusal: BatchError?
        do {
            try second.add(piece("second", "simmer"))
        } catch {
            refusal = error
        }
        guard let secondOperation = await submitOnItsOwnThread(second, to: queue) else { return }
        operations.withValue { $0 = ["first": firstOperation, "second": secondOperation] }
        queue.isSuspended = false
        await waitUntil("both batches' operations to finish") {
            firstOperation.isFinished && secondOperation.isFinished
        }
        await waitUntil("the batches' three pieces to run") { ran.count == 3 }

        #expect(
            refusal == nil && Set(ran.all) == ["first: wash", "second: chop", "second: simmer"],
            """
            Only the first batch was submitted when simmer was added to the second. Expected the \
            second batch to take it and every piece to run inside its own batch's operation; add(_:) \
            \(refusal.map { "threw \($0)" } ?? "took it"), and the pieces that ran were: \
            \(ran.timeline). "Submitted" belongs to one batch: kept in a static, it closes every batch.
            \(lesson.see("Block operations"))
            """)
    }
}

// One spec at a time: each holds a step on a thread while it looks for overlap, and on Linux
// several held threads starve Dispatch, so a concurrent queue could not start the next step in
// time and would look serial.
@Suite("Steps that must run in order go to a serial queue", .watched, .serialized)
struct StepsInOrder {
    // Hint: OrderedSteps.run, "When order matters". Which kind of queue runs one thing at a
    // time, first in, first out, whatever the priority?
    // Covers: C15, C47
    // Paths: values, memory, interference
    @Test(
        "each step starts only after the one before it has ended, in the order handed in, whatever their priorities: an urgent step does not jump ahead, and neither does a normal one ahead of a low one; once a step ran, the runner keeps nothing of it; a step may wait for another runner's step",
        arguments: [
            [Operation.QueuePriority.low, .normal, .veryHigh], [.high, .veryLow, .normal],
        ])
    func oneAfterAnother(priorities: [Operation.QueuePriority]) async throws {
        let steps = OrderedSteps(label: "kata.chapter2.steps")
        let log = Recorder<String>()
        let handedIn = Gate("all three steps handed in")
        let secondStarted = Gate("step 2 started")
        // What the first step captured, and its own operation for a runner built on an operation
        // queue (on Apple platforms a block operation may drop its blocks once they ran, so the
        // garnish alone would not show that the runner keeps the operation).
        let firstStepOperations = Protected<[WeakReference<Operation>]>([])
        let garnish = Garnish()
        let captured = WeakReference(garnish)
        steps.run(priority: priorities[0]) { [garnish] in
            let running = OperationQueue.current?.operations.filter(\.isExecuting) ?? []
            firstStepOperations.withValue { $0 = running.map { WeakReference($0) } }
            _ = garnish.name
            log.record("1 starts")
            handedIn.wait()
            // On a serial queue step 2 cannot start now; on a concurrent one it starts at once.
            secondStarted.wait(timeout: Bound.scaled(.milliseconds(100)))
            log.record("1 ends")
        }
        steps.run(priority: priorities[1]) {
            log.record("2 starts")
            secondStarted.open()
            log.record("2 ends")
        }
        // What the last step captured: a runner that keeps its newest step keeps this one.
        let lastGarnish = Garnish()
        let capturedByLast = WeakReference(lastGarnish)
        steps.run(priority: priorities[2]) { [lastGarnish] in
            _ = lastGarnish.name
            log.record("3 starts")
            log.record("3 ends")
        }
        _ = consume garnish
        _ = consume lastGarnish
        handedIn.open()
        await waitUntil("all three steps to end") { log.count == 6 }
        let firstStepLetGo = await comesTrue(within: Bound.standard) {
            withExtendedLifetime(steps) {
                captured.value == nil && capturedByLast.value == nil
                    && firstStepOperations.value.allSatisfy { $0.value == nil }
            }
        }

        let expected = ["1 starts", "1 ends", "2 starts", "2 ends", "3 starts", "3 ends"]
        #expect(
            log.all == expected,
            """
            Steps 1, 2 and 3 were handed in in that order, with the priorities \
            \(priorities.map(Self.name(of:)).joined(separator: ", ")). \
            Expected them one after another: \(expected.joined(separator: " → ")); they ran as: \
            \(log.timeline). A concurrent queue overlaps them; an operation queue, even one \
            limited to one operation at a time, picks the next by priority.
            \(lesson.see("When order matters"))
            """)
        // A step of this runner that waits for a step of another runner, made with the same
        // label: each runner is a line of its own, so the other runner's step runs meanwhile.
        let other = OrderedSteps(label: "kata.chapter2.steps")
        let otherStepRan = Gate("the other runner's step ran")
        let waited = Protected<Bool?>(nil)
        steps.run {
            let ran = otherStepRan.wait(timeout: Bound.standard)
            waited.withValue { $0 = ran }
        }
        other.run { otherStepRan.open() }
        await waitUntil("the step waiting for the other runner's step to end") { waited.value != nil }
        #expect(
            waited.value == true,
            """
            A step of one runner waited for a step handed to another runner with the same label; \
            that step did not run while it waited (\(Bound.standard.seconds) s). Each runner is a \
            line of its own, whatever its label (a label only names the queue for debugging \
            tools): steps of two runners keep their own orders and never wait for each other, as \
            a queue shared by every runner, or by every runner of one label, would make them.
            \(lesson.see("When order matters"))
            """)
        #expect(
            firstStepLetGo,
            """
            All three steps ended and the runner is still in use, but the first step (or the \
            garnish it captured, or its operation) or the last step (or what it captured) is \
            still alive (first: \(captured.value == nil ? "freed" : "kept"), last: \
            \(capturedByLast.value == nil ? "freed" : "kept")): the runner keeps the steps it was \
            given, so everything they captured stays as long as it lives. A list of every \
            operation does that, keeping the newest step does it for the last one, and keeping \
            the newest operation keeps the one before it as a dependency, and that one the one \
            before it.
            \(lesson.see("When order matters"))
            """)
    }

    // Hint: OrderedSteps.run, "When order matters". Several threads hand in steps at the same
    // time. What does run(_:) read and then write that another call may be reading and writing
    // meanwhile?
    // Covers: C15
    // Paths: interference
    @Test(
        "steps handed in from several threads at once still run one at a time, each thread's in the order it handed them in"
    )
    func handedInFromSeveralThreads() async {
        // Several rounds, each with a runner of its own: two calls that read the same newest
        // step between two critical sections are a matter of chance in any one round.
        let (rounds, threads, each) = (30, 16, 25)
        let stepLasts = Bound.scaled(.microseconds(50))
        let running = Protected(0)
        let overlaps = Protected(0)
        let anotherStarted = Gate("a step started while another ran")
        let firstTaken = Protected(false)
        var outOfOrder: [String] = []
        for round in 1...rounds {
            let steps = OrderedSteps(label: "kata.chapter2.crowd")
            let ran = Recorder<Int>()  // thread × 1000 + its step's number, in the order they ran
            let go = Gate("every thread ready to hand in its steps")
            // The line is held until every thread has handed in all its steps, so that the
            // calls to run(_:) meet one another, not the steps.
            let allHandedIn = Gate("every thread handed in all its steps")
            let threadsDone = Protected(0)
            let threadsReady = Protected(0)
            steps.run { allHandedIn.wait() }
            for thread in 0..<threads {
                Thread.detachNewThread {
                    threadsReady.withValue { $0 += 1 }
                    go.wait()
                    defer {
                        if threadsDone.withValue({ done in
                            done += 1
                            return done == threads
                        }) {
                            allHandedIn.open()
                        }
                    }
                    for number in 0..<each {
                        steps.run {
                            let overlapping = running.withValue { count in
                                count += 1
                                return count > 1
                            }
                            if overlapping {
                                overlaps.withValue { $0 += 1 }
                                anotherStarted.open()
                            }
                            let isFirst = firstTaken.withValue { taken in
                                let first = !taken
                                taken = true
                                return first
                            }
                            if isFirst {
                                // On a serial line nothing else can start now; elsewhere another step does.
                                anotherStarted.wait(timeout: Bound.scaled(.milliseconds(100)))
                            }
                            // A step keeps its processor busy for a moment (it waits for nothing), so
                            // that a step started beside it on another processor is seen.
                            let busyUntil = ContinuousClock.now + stepLasts
                            while ContinuousClock.now < busyUntil {}
                            ran.record(thread * 1000 + number)
                            running.withValue { $0 -= 1 }
                        }
                    }
                }
            }
            // Every thread is started and waiting before any hands in a step, so that they all
            // call run(_:) at once instead of one after another as they start.
            let ready = await waitUntil("all \(threads) threads to be ready, in round \(round)") {
                threadsReady.value == threads
            }
            go.open()  // also when some thread never got ready: none is left waiting at the gate
            guard ready else { return }
            guard
                await waitUntil(
                    "all \(threads * each) steps from \(threads) threads to run, in round \(round)",
                    hint: "\(ran.count) ran. \(lesson.see("When order matters"))", { ran.count == threads * each })
            else { return }
            for thread in 0..<threads {
                let own = ran.all.filter { $0 / 1000 == thread }.map { $0 % 1000 }
                if own != Array(0..<each) { outOfOrder.append("\(thread) in round \(round)") }
            }
        }
        #expect(
            overlaps.value == 0 && outOfOrder.isEmpty,
            """
            In each of \(rounds) rounds, \(threads) threads each handed in \(each) steps at the same \
            time. Expected one step at a time, each thread's steps in the order it handed them in; \
            \(overlaps.value) steps started while another ran, and threads \(outOfOrder) saw their \
            steps out of order. run(_:) may be called from several threads at once: whatever it \
            reads and then replaces (the newest step a new one waits for) is one step, under one \
            lock, or two calls wait for the same step and their two steps run at once. A serial \
            queue needs no lock.
            \(lesson.see("When order matters"))
            """)
    }

    static func name(of priority: Operation.QueuePriority) -> String {
        switch priority {
        case .veryLow: "very low"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .veryHigh: "very high"
        @unknown default: "raw \(priority.rawValue)"
        }
    }
}
