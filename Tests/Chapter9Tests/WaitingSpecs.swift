import Chapter9
import Foundation
import KataTestSupport
import Testing

/// Scenarios that deadlock when the code waits where it must not; each runs in a child process.
///
/// A deadlocked thread can never be freed, so no spec lets one happen in the test process. The
/// child waits a bounded time for what correct code does, then exits with a failure and says
/// what it saw; it returns normally when all went well.
enum WaitingScenario {
    /// Asks for a digest of three months on the main queue, as a screen would, while March is
    /// still held; expects digest() to return at once, then the digest, built from their sections,
    /// in order, and its parts freed while the digest's job is still held.
    static func digest() {
        let ledger = Ledger(holding: ["March"])
        let generator = ReportGenerator(source: ledger)
        let delivered = Protected<Report?>(nil)
        let onMain = Protected<Bool?>(nil)  // whether deliver ran on the main queue
        let arrived = Gate("the digest")
        let asked = Protected<DigestJob?>(nil)
        let returned = Gate("digest() returned")
        OperationQueue.main.addOperation {
            let digest = generator.digest(
                "Q1", of: ["January", "February", "March"], sections: ["sales", "costs"]
            ) { report in
                onMain.withValue { $0 = MainQueue.isCurrent }
                delivered.withValue { $0 = report }
                arrived.open()
            }
            asked.withValue { $0 = digest }
            returned.open()
        }
        guard returned.wait(timeout: patience) else {
            ledger.release("March")
            // Only to tell a deadlock from a long block: correct code never gets here.
            guard returned.wait(timeout: patience / 2) else {
                LastWords.fail(
                    "digest",
                    """
                    digest(), called on the main queue, never returned, not even after March was \
                    built: it waits for its parts, and something it waits for never comes.
                    """)
            }
            LastWords.fail(
                "digest",
                """
                digest(), called on the main queue, returned only once its parts were built: it \
                waited for them, blocking the main queue, and the whole app, while the ledger worked. \
                Nobody waits: the digest depends on its parts, and its report arrives later. \
                \(lesson.see("Waiting on the main queue"))
                """)
        }
        var digest = asked.withValue { job in
            defer { job = nil }
            return job
        }
        // March is held, so the digest has not run yet and its dependencies are its parts.
        let parts = Watch()
        for part in digest?.dependencies ?? [] {
            parts.add(part, as: (part as? ReportJob).map { "the \($0.title) part" } ?? "a part")
        }
        let watch = Watch()
        if let digest { watch.add(digest, as: "the digest's job") }
        ledger.release("March")
        guard arrived.wait(timeout: patience) else {
            LastWords.fail(
                "digest",
                """
                The digest of January, February and March never arrived (waited \
                \(patience.seconds) s); the ledger saw the loads \(ledger.loads.timeline). Something \
                holds the ledger queue's only slot while it waits for work queued behind it.
                """)
        }
        let sections = delivered.value?.sections.map { "\($0.report)/\($0.name)" } ?? []
        let expected = ["January", "February", "March"].flatMap { ["\($0)/sales", "\($0)/costs"] }
        guard onMain.value == true else {
            LastWords.fail(
                "digest",
                """
                The digest arrived, but deliver ran off the main queue, on a thread of the ledger \
                queue: the screen may only be drawn from the main queue. The digest's completion \
                block must hand the report to the main queue, as generate() does. \
                \(lesson.see("Waiting on the main queue"))
                """)
        }
        guard sections == expected else {
            LastWords.fail("digest", "The digest held the sections \(sections); expected \(expected), in that order.")
        }
        let width = generator.queue.maxConcurrentOperationCount
        guard width == 1 else {
            LastWords.fail(
                "digest",
                """
                The digest arrived, but the ledger queue now runs \(width == -1 ? "any number of" : "\(width)") \
                operations at once. The ledger takes one connection: widening the queue only \
                moves the deadlock to the day two digests wait at once.
                """)
        }
        let away = ledger.loads(awayFrom: generator.queue)
        guard away.isEmpty else {
            LastWords.fail(
                "digest",
                """
                The digest arrived, but the loads \(away) did not run on the ledger queue. The \
                ledger takes one connection: every load goes through that one-at-a-time queue, and \
                a digest that waits for parts on another queue still blocks a thread.
                """)
        }
        guard settles(within: patience, { parts.alive.isEmpty }) else {
            LastWords.fail(
                "digest",
                """
                The digest arrived, and while its job was still held, \(parts.alive) stayed in memory \
                \(patience.seconds) s later: the digest's job keeps its finished parts, as \
                dependencies it never removed or in a list of its own. Read the parts' reports, \
                then let the parts go. \(lesson.see("What dependencies keep alive"))
                """)
        }
        withExtendedLifetime(digest) {}
        digest = nil
        delivered.withValue { $0 = nil }
        guard settles(within: patience, { watch.alive.isEmpty }) else {
            LastWords.fail(
                "digest",
                """
                The digest arrived, but its job was still in memory \(patience.seconds) s later, \
                although nobody held it: its completion block captures it, a cycle that Linux \
                never breaks.
                """)
        }
    }

    /// Asks for a digest, cancels one of its parts while the first still loads, and expects the
    /// digest all the same, with the ledger queue still free for the next report.
    static func digestWithACancelledPart() {
        let ledger = Ledger(holding: ["January"])
        let generator = ReportGenerator(source: ledger)
        let arrived = Gate("the digest")
        let reported = Protected<[String]>([])  // the reports the digest's sections came from
        let months = ["January", "February", "March", "April", "May", "June"]
        let digest = generator.digest("Jan-Jun", of: months, sections: ["sales"]) {
            report in
            reported.withValue { $0 = report.sections.map(\.report) }
            arrived.open()
        }
        guard settles(within: patience, { ledger.loadCount(of: "January") > 0 }) else {
            ledger.release("January")
            LastWords.fail(
                "digestCancelledPart",
                "The digest's first part, January, never began to load (waited \(patience.seconds) s).")
        }
        // The caller also makes the digest wait for the budget, which is no part of it: the
        // digest reads the parts it was given, not whatever it depends on. (Added while January
        // loads, so that a digest that waits for its parts has not started yet.)
        let budget = ReportJob(title: "Budget", sections: ["sales"], source: ledger)
        digest.addDependency(budget)
        generator.queue.addOperation(budget)
        let february = digest.dependencies.first { ($0 as? ReportJob)?.title == "February" }
        february?.cancel()
        ledger.release("January")
        guard arrived.wait(timeout: patience) else {
            LastWords.fail(
                "digestCancelledPart",
                """
                February, a part of the digest, was cancelled while January loaded \
                (\(february == nil ? "the spec found it nowhere among the digest's dependencies; " : "")the \
                ledger saw \(ledger.loads.timeline)). The digest then never arrived (waited \
                \(patience.seconds) s): whatever the digest does about a part that has no report, it \
                must not wait inside the ledger queue for work that needs that queue's only slot.
                """)
        }
        let kept = reported.value.filter { $0 != "February" }
        let notAPart =
            kept.contains("Budget")
            ? """
            , and only its parts: its caller also made it wait for the Budget report, which is \
            no part, yet Budget's sections are in the digest. It read every report among its \
            dependencies instead of the parts it was given (and `dependencies` promises no order)
            """ : ""
        guard kept == ["January", "March", "April", "May", "June"] else {
            LastWords.fail(
                "digestCancelledPart",
                """
                The digest of January to June, whose February part was cancelled, arrived with \
                sections from \(reported.value); expected those of January, March, April, May and June, in that \
                order (February's too if the digest loads them itself). A digest reads every part \
                it was given, however many, in the order asked for\(notAPart). \(lesson.see("Waiting inside a queue"))
                """)
        }
        let july = Gate("July")
        generator.generate("July", sections: ["sales"]) { _ in july.open() }
        guard july.wait(timeout: patience) else {
            LastWords.fail(
                "digestCancelledPart",
                """
                The digest with a cancelled part arrived, but July, asked for afterwards, never \
                did (waited \(patience.seconds) s): something still holds the ledger queue's only slot.
                """)
        }
    }

    /// Refreshes the screen from the main queue while the report is still being built.
    static func refresh() {
        let ledger = Ledger(holding: ["March"])
        let generator = ReportGenerator(source: ledger)
        let shown = Protected<[String]>([])
        let appeared = Gate("the report on screen")
        let screen = ReportScreen(generator: generator) { report in
            let name = "\(report.title) \(report.sections.map(\.name).joined(separator: "+"))"
            shown.withValue { $0.append(MainQueue.isCurrent ? name : "\(name), off the main queue") }
            appeared.open()
        }
        let returned = Gate("refresh() returned")
        OperationQueue.main.addOperation {
            screen.refresh("March", sections: ["sales"])
            returned.open()
        }
        guard returned.wait(timeout: patience) else {
            ledger.release("March")
            // Only to tell a deadlock from a long block: correct code never gets here.
            guard returned.wait(timeout: patience / 2) else {
                LastWords.fail(
                    "refresh",
                    """
                    refresh(), called on the main queue, never returned, not even after the \
                    report was built: it waits on the main queue for work that needs the main \
                    queue to run. A deadlock.
                    """)
            }
            LastWords.fail(
                "refresh",
                """
                refresh(), called on the main queue, returned only once the report was built: \
                it blocked the main queue, and the whole app, while the ledger worked.
                """)
        }
        // March is held, so its job is still in the ledger queue: watch it without keeping it.
        let job = Watch()
        for operation in generator.queue.operations { job.add(operation, as: "the refresh's job") }
        let free = Gate("a block on the main queue")
        OperationQueue.main.addOperation { free.open() }
        guard free.wait(timeout: patience) else {
            LastWords.fail(
                "refresh",
                """
                refresh() returned, but the main queue stayed blocked while the report was being \
                built (a block enqueued on it did not run within \(patience.seconds) s).
                """)
        }
        ledger.release("March")
        guard appeared.wait(timeout: patience) else {
            LastWords.fail("refresh", "The report for March never appeared on the screen after it was built.")
        }
        guard shown.value == ["March sales"] else {
            LastWords.fail(
                "refresh", "The screen showed \(shown.value); expected [\"March sales\"], shown from the main queue.")
        }
        guard settles(within: patience, { job.alive.isEmpty }) else {
            LastWords.fail(
                "refresh",
                """
                March's report was shown, but \(patience.seconds) s later, while the screen was \
                still held, its job was still in memory: the screen keeps the finished job, in a \
                property or in an operation that depends on it. Remember which refresh is the \
                newest without keeping its job. \(lesson.see("What dependencies keep alive"))
                """)
        }

        // A second screen, on the same generator, made before either refreshes again: each
        // screen's newest refresh is its own.
        let otherShown = Protected<[String]>([])
        let other = ReportScreen(generator: generator) { report in
            otherShown.withValue { $0.append(report.title) }
        }
        OperationQueue.main.addOperation {
            screen.refresh("April", sections: ["sales"])
            other.refresh("May", sections: ["sales"])
        }
        guard settles(within: patience, { shown.value.contains("April sales") && otherShown.value == ["May"] }) else {
            LastWords.fail(
                "refresh",
                """
                Two screens on one generator each asked for a report, in one block on the main \
                queue; \(patience.seconds) s later the first showed \(shown.value.dropFirst()) (expected \
                [\"April sales\"]) and the second \(otherShown.value) (expected [\"May\"]). One screen's \
                refresh made the other's report look stale: the number or job that names the newest \
                refresh is kept where every screen shares it (a static), not in the screen. \
                \(lesson.see("Waiting on the main queue"))
                """)
        }

        // Two refreshes of one screen in one block, the older's job lowered in priority while
        // both wait: a width-one queue then builds the newer first (Linux re-sorts a waiting
        // operation whose priority changes; Apple documents no promise, so there only the
        // screen's own mark is judged). The older report must not replace the newer one.
        generator.queue.isSuspended = true
        let pair = Gate("refresh() of August and September returned")
        OperationQueue.main.addOperation {
            screen.refresh("August", sections: ["sales"])
            screen.refresh("September", sections: ["sales"])
            pair.open()
        }
        guard pair.wait(timeout: patience) else {
            generator.queue.isSuspended = false
            LastWords.fail(
                "refresh",
                "refresh() of August and then September, on the main queue, did not return within \(patience.seconds) s."
            )
        }
        let pairJobs = Watch()
        for operation in generator.queue.operations {
            pairJobs.add(operation, as: "a job of the August or September refresh")
            if (operation as? ReportJob)?.title == "August" { operation.queuePriority = .veryLow }
        }
        let shownBefore = shown.value.count
        generator.queue.isSuspended = false
        // A job is freed once whatever delivers its report has handed it to the main queue.
        guard settles(within: patience, { pairJobs.alive.isEmpty }) else {
            LastWords.fail(
                "refresh",
                """
                August and September were refreshed and their jobs built, but \(patience.seconds) s \
                later \(pairJobs.alive) was still in memory while the screen was held. \
                \(lesson.see("What dependencies keep alive"))
                """)
        }
        let drained = Gate("a block on the main queue after both deliveries")
        OperationQueue.main.addOperation { drained.open() }
        guard drained.wait(timeout: patience) else {
            LastWords.fail("refresh", "The main queue did not run a block within \(patience.seconds) s.")
        }
        let pairShown = Array(shown.value.dropFirst(shownBefore))
        guard pairShown.last == "September sales" else {
            LastWords.fail(
                "refresh",
                """
                The screen was refreshed with August and then September, in one block on the main \
                queue, and August's job was then lowered in priority, so the ledger built September \
                first; the screen showed \(pairShown) and ends on \"\(pairShown.last ?? "nothing")\", \
                expected to end on \"September sales\". Two refreshes' jobs do not depend on each \
                other, so nothing promises which ends first: the screen remembers its newest refresh \
                and drops a report from any older one. \(lesson.see("Waiting on the main queue"))
                """)
        }

        // A refresh whose job is cancelled before it runs (the app cancels everything on the
        // ledger): nothing of it stays, and the next refresh is shown as the first was.
        generator.queue.isSuspended = true
        let asked = Gate("refresh() of June returned")
        OperationQueue.main.addOperation {
            screen.refresh("June", sections: ["sales"])
            asked.open()
        }
        guard asked.wait(timeout: patience) else {
            LastWords.fail(
                "refresh", "refresh() of June, on the main queue, did not return within \(patience.seconds) s.")
        }
        let june = Watch()
        for operation in generator.queue.operations { june.add(operation, as: "June's cancelled job") }
        generator.queue.cancelAllOperations()
        generator.queue.isSuspended = false
        guard settles(within: patience, { june.alive.isEmpty }) else {
            LastWords.fail(
                "refresh",
                """
                June's refresh was cancelled with cancelAllOperations() before its job ran, and \
                \(patience.seconds) s later, while the screen was still held, \(june.alive) was still \
                in memory: something the screen let go of only once a report was shown (a spinner \
                or timer that captures the job, a list of pending jobs) never lets go of a job that \
                has no report. \(lesson.see("What dependencies keep alive"))
                """)
        }
        OperationQueue.main.addOperation { screen.refresh("July", sections: ["sales"]) }
        guard settles(within: patience, { shown.value.contains("July sales") }) else {
            LastWords.fail(
                "refresh",
                """
                After June's refresh was cancelled before its job ran, the screen was refreshed \
                with July, which never appeared (waited \(patience.seconds) s; the screen showed \
                \(shown.value)). The screen keeps a state that only a shown report resets (a \
                "refresh in flight" flag, a queue of waiting requests): a cancelled job delivers \
                no report, so every exit of a refresh must leave the screen ready for the next. \
                \(lesson.see("Waiting on the main queue"))
                """)
        }
        guard !shown.value.contains(where: { $0.hasPrefix("June") }) else {
            LastWords.fail(
                "refresh", "The screen showed June's report, although June's job was cancelled before it ran.")
        }

        // October's job ends while the main queue is busy; in that same turn the screen is
        // refreshed with November. Whatever October's job already handed to the main queue
        // runs after that turn, when October is no longer the newest refresh.
        generator.queue.isSuspended = true
        let octoberAsked = Gate("refresh() of October returned")
        OperationQueue.main.addOperation {
            screen.refresh("October", sections: ["sales"])
            octoberAsked.open()
        }
        guard octoberAsked.wait(timeout: patience) else {
            generator.queue.isSuspended = false
            LastWords.fail(
                "refresh", "refresh() of October, on the main queue, did not return within \(patience.seconds) s.")
        }
        let octoberJobs = generator.queue.operations
        let turn = Gate("the spec's turn on the main queue")
        let novemberAsked = Gate("refresh() of November returned")
        let hold = MainQueue.hold(until: turn) {
            shown.withValue { $0.append("(November asked)") }
            screen.refresh("November", sections: ["sales"])
            novemberAsked.open()
        }
        generator.queue.isSuspended = false
        // October's job has ended, and whatever runs as it ends has run (a completion block that
        // clears itself at its end); a design that keeps its block goes on after the bound.
        _ = settles(within: patience) { octoberJobs.allSatisfy { $0.isFinished && $0.completionBlock == nil } }
        turn.open()
        guard novemberAsked.wait(timeout: patience), !hold.gaveUp,
            settles(within: patience, { shown.value.contains("November sales") })
        else {
            LastWords.fail(
                "refresh",
                """
                After October's job ended, the screen was refreshed with November from the main \
                queue; November's report never appeared (waited \(patience.seconds) s; the screen \
                showed \(shown.value)).
                """)
        }
        let afterNovember = shown.value.drop { $0 != "(November asked)" }
        guard !afterNovember.contains(where: { $0.hasPrefix("October") }) else {
            LastWords.fail(
                "refresh",
                """
                October's job ended while the main queue was busy, and in that same turn the screen \
                was refreshed with November; the screen then showed \(Array(afterNovember)): October's \
                report after November was asked for. Whether a refresh is still the newest was \
                decided as its job ended, off the main queue, and the report was then shown without \
                asking again: a refresh asked for while the report is on its way to the main queue \
                is overtaken by it. Ask on the main queue, as the report is about to be shown. \
                \(lesson.see("Waiting on the main queue"))
                """)
        }
        withExtendedLifetime((screen, other, octoberJobs)) {}
    }

    /// Flushes between two held reports, and on an idle generator.
    static func flush() {
        // A call that never returns ends the child, which then says what it was waiting for.
        exitIfStillRunning(after: Bound.standard * 3, status: EXIT_FAILURE)
        let ledger = Ledger(holding: ["January", "February"])
        let generator = ReportGenerator(source: ledger)
        let idle = Gate("flush on an idle generator")
        let idleCalls = Protected(0)
        generator.flush {
            idleCalls.withValue { $0 += 1 }
            idle.open()
        }
        guard idle.wait(timeout: patience) else {
            LastWords.fail(
                "flush",
                """
                flush() on a generator with nothing to do never called back (waited \
                \(patience.seconds) s): something inside the ledger queue waits for that queue, \
                itself included, to be empty.
                """)
        }

        let january = generator.generate("January", sections: ["sales"]) { _ in }
        let flushed = Protected<Bool?>(nil)  // whether January had finished when done ran
        let called = Gate("flush done")
        generator.flush {
            flushed.withValue { $0 = january.isFinished }
            called.open()
        }
        // January is held until it is released below (or its hold runs out): a flush() that has
        // returned by now did not wait for it.
        guard !january.isFinished else {
            LastWords.fail(
                "flush",
                """
                flush() returned only after January, asked for before it, was built: it blocked \
                its caller (the main queue, in an app) while the ledger queue worked. It should \
                return at once and let the queue call back.
                """)
        }
        generator.generate("February", sections: ["sales"]) { _ in }
        ledger.release("January")
        guard called.wait(timeout: patience) else {
            ledger.release("February")
            let late = called.wait(timeout: patience)
            LastWords.fail(
                "flush",
                late
                    ? """
                    flush() called back only after February, asked for after the flush, was \
                    built too: it waited for the whole queue instead of the work before it.
                    """
                    : """
                    flush() never called back, although January, the only report asked for \
                    before it, was built: it waits inside the ledger queue for that queue to \
                    be empty, which never happens while it is in it.
                    """)
        }
        guard flushed.value == true else {
            LastWords.fail("flush", "flush() called back while January, asked for before it, was still being built.")
        }
        ledger.release("February")

        // A report and a digest whose callers lowered their priority after asking: a barrier
        // still waits for both.
        generator.queue.isSuspended = true
        let june = generator.generate("June", sections: ["sales"]) { _ in }
        june.queuePriority = .veryLow
        LastWords.note(
            "flush",
            """
            digest(), asked for while the ledger's queue was suspended, never returned: it waits \
            for its parts, which a suspended queue does not run. A digest hands its job to the \
            queue and returns at once.
            """)
        let summer = generator.digest("Summer", of: ["July", "August"], sections: ["sales"]) { _ in }
        LastWords.note("flush", "After the Summer digest was asked for, something the scenario called never returned.")
        summer.queuePriority = .veryLow
        let juneFinished = Protected<Bool?>(nil)  // whether June had finished when done ran
        let summerFinished = Protected<Bool?>(nil)  // whether the Summer digest had finished when done ran
        let lowDone = Gate("flush after a low-priority report")
        generator.flush {
            juneFinished.withValue { $0 = june.isFinished }
            summerFinished.withValue { $0 = summer.isFinished }
            lowDone.open()
        }
        generator.queue.isSuspended = false
        guard lowDone.wait(timeout: patience) else {
            LastWords.fail(
                "flush",
                """
                flush(), asked for after June, whose caller had lowered its priority, never called \
                back (waited \(patience.seconds) s).
                """)
        }
        guard juneFinished.value == true else {
            LastWords.fail(
                "flush",
                """
                flush() called back before June was built, although June was asked for before it: \
                June's caller had lowered its priority, and a width-one queue starts the ready \
                operation of highest priority first, so an operation added last runs before it. \
                Only a barrier waits for everything added before it, whatever its priority. \
                \(lesson.see("Barriers instead of waits"))
                """)
        }
        guard summerFinished.value == true else {
            LastWords.fail(
                "flush",
                """
                flush() called back before the Summer digest was built, although it was asked for \
                before the flush (its caller had lowered its priority, as June's had). Reports \
                chain to the newest report, but a digest is not in that chain: an operation that \
                waits for the newest report only, or for anything less than everything added \
                before it, misses the digest. A barrier waits for every operation added before it. \
                \(lesson.see("Barriers instead of waits"))
                """)
        }
        guard idleCalls.value == 1 else {
            LastWords.fail(
                "flush",
                """
                flush() on an idle generator called back \(idleCalls.value) times; expected once. A \
                caller counts on done running once per flush: a flush that answers at once when the \
                queue looks empty and also leaves a barrier behind calls it twice. The barrier \
                alone runs at once on an empty queue. \(lesson.see("Barriers instead of waits"))
                """)
        }
    }
}

@Suite("Waiting without deadlock", .watched)
struct WaitingSpecs {
    // The digest runs on the ledger queue, which runs one operation at a time. Read
    // DigestJob.main() and ReportGenerator.digest: what is the digest waiting for, and where does
    // that work have to run? See "Waiting inside a queue". Nobody waits for it, not even the
    // caller on the main queue. Once it arrives, nothing may keep its finished parts or its job
    // alive: see "Completion blocks and cycles".
    // Covers: C62, C63, C65, C66
    // Paths: memory, collaborators
    @Test(
        "a digest of three months, asked for on the main queue, arrives later although the ledger runs one operation at a time, and lets its parts go"
    )
    func digestDoesNotWaitInsideItsQueue() async {
        LastWords.forget("digest")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected digest(), called on the main queue, to return at once, the digest to arrive \
            on the main queue within \(patience.seconds) s with every part's sections, built on a ledger queue that \
            still runs one operation at a time, its parts to be freed while its job was held, and \
            its job to be freed once delivered.
            \(lesson.see("Waiting inside a queue"))
            """
        ) {
            WaitingScenario.digest()
        }
        LastWords.explain("digest", outcome)
    }

    // A part of a digest can be cancelled before it runs: what does DigestJob.main() do when a
    // part has no report, and where does that code run? And which of its dependencies are its
    // parts? See "Waiting inside a queue".
    // Covers: C62
    // Paths: values, reuse
    @Test(
        "a digest of six months, one of whose parts was cancelled, still arrives with all the other parts, and leaves the ledger free"
    )
    func digestWithACancelledPartStillArrives() async {
        LastWords.forget("digestCancelledPart")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected a digest of six months whose February part was cancelled before it ran to \
            arrive within \(patience.seconds) s with the other five months' sections and none of \
            the Budget report it was also made to wait for, and the next report to be built after it.
            \(lesson.see("Waiting inside a queue"))
            """
        ) {
            WaitingScenario.digestWithACancelledPart()
        }
        LastWords.explain("digestCancelledPart", outcome)
    }

    // refresh() is called on the main queue. Read ReportScreen.refresh: does it wait, and does
    // what it waits for need the main queue? See "Waiting on the main queue". Once the report
    // is shown, what does the screen still hold? See "What dependencies keep alive". Where does
    // the screen keep the newest refresh, does an older refresh that ends last replace the
    // newer report, and what happens to the mark when a refresh's job is cancelled and
    // delivers nothing?
    // Covers: C63, C65, C101
    // Paths: memory, reuse, interference, collaborators
    @Test(
        "refresh() returns at once on the main queue, the report appears when it is built, and the screen lets its job go, also a cancelled one's; two screens keep their own newest refresh"
    )
    func refreshLeavesTheMainQueueFree() async {
        LastWords.forget("refresh")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected refresh(), called on the main queue, to return while the report was still \
            being built, the main queue to stay free, the report to appear once built, and its \
            job to be freed while the screen was still held; two screens refreshed at once to \
            show one report each; an older refresh whose job ended last not to replace the newer \
            report; a refresh whose job was cancelled to leave nothing in memory and the next \
            refresh to be shown.
            \(lesson.see("Waiting on the main queue"))
            """
        ) {
            WaitingScenario.refresh()
        }
        LastWords.explain("refresh", outcome)
    }

    // flush() must call back once the reports asked for before it are built, without waiting
    // for later ones, without blocking a thread, and once per call. Read ReportGenerator.flush.
    // See "Barriers instead of waits".
    // Covers: C64
    // Paths: reuse, collaborators
    @Test(
        "flush() returns at once, and calls back once, as soon as earlier reports are built, not waiting for later ones"
    )
    func flushWaitsForEarlierReportsOnly() async {
        LastWords.forget("flush")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected flush() to return at once, and to call back once: at once on an idle \
            generator, and otherwise as soon as every report asked for before it was built, while \
            a later report was still running.
            \(lesson.see("Barriers instead of waits"))
            """
        ) {
            WaitingScenario.flush()
        }
        LastWords.explain("flush", outcome)
    }
}
