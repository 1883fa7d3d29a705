import Chapter9
import Foundation
import KataTestSupport
import Testing

/// Scenarios that stop the program when the code misuses an operation; each runs in a child process.
enum LifetimeScenario {
    /// Builds March's report, then asks for it again.
    static func regenerate() {
        let ledger = Ledger()
        let generator = ReportGenerator(source: ledger)
        let first = Gate("the first report")
        let job = generator.generate("March", sections: ["sales"]) { _ in first.open() }
        guard first.wait(timeout: patience) else {
            LastWords.fail("regenerate", "The first report for March never arrived (waited \(patience.seconds) s).")
        }
        let again = Gate("the second report")
        let second = generator.regenerate(job) { report in
            if report.title == "March" { again.open() }
        }
        guard again.wait(timeout: patience) else {
            LastWords.fail(
                "regenerate",
                """
                regenerate() returned, but no second report for March arrived (waited \
                \(patience.seconds) s); the ledger saw \(ledger.loads.timeline). A finished \
                operation never runs again: start() on it does nothing.
                """)
        }
        guard second !== job else {
            LastWords.fail("regenerate", "regenerate() returned the finished job itself; expected a new one.")
        }
        guard ledger.loadCount(of: "March") == 2 else {
            LastWords.fail(
                "regenerate", "The ledger saw \(ledger.loads.timeline); a regenerated report loads its sections again.")
        }

        // A job cancelled before it ran is regenerated like any other.
        generator.queue.isSuspended = true
        let cancelled = generator.generate("May", sections: ["costs"]) { _ in }
        cancelled.cancel()
        generator.queue.isSuspended = false
        guard settles(within: patience, { cancelled.isFinished }) else {
            LastWords.fail(
                "regenerate", "May's job, cancelled before it ran, never finished (waited \(patience.seconds) s).")
        }
        LastWords.note(
            "regenerate",
            """
            regenerate() was called for May's job, which was cancelled before it ran, and the \
            program stopped: a cancelled operation is finished, and adding it to a queue again is \
            a programmer error. Make a new job from its title and sections.
            """)
        let may = Protected<[String]?>(nil)
        let mayArrived = Gate("May's regenerated report")
        _ = generator.regenerate(cancelled) { report in
            may.withValue { $0 = report.sections.map(\.name) }
            mayArrived.open()
        }
        guard mayArrived.wait(timeout: patience) else {
            LastWords.fail(
                "regenerate",
                """
                regenerate() of May's job, cancelled before it ran, delivered no report (waited \
                \(patience.seconds) s); the ledger saw \(ledger.loads.timeline). A cancelled job \
                never built anything: regenerate it from its title and sections.
                """)
        }
        guard may.value == ["costs"] else {
            LastWords.fail(
                "regenerate",
                """
                regenerate() of May's job, cancelled before it ran, delivered the sections \
                \(may.value ?? []); expected [\"costs\"], the sections the job was asked for, not \
                those of a report it never built.
                """)
        }

        // A report built again is a report like any other: it waits for June, asked for before
        // it, although June's caller lowered June's priority while both waited.
        generator.queue.isSuspended = true
        let loadsBefore = ledger.loads.count
        let june = generator.generate("June", sections: ["sales"]) { _ in }
        june.queuePriority = .veryLow
        let marchAgain = Gate("March's report built again after June's")
        LastWords.note(
            "regenerate",
            """
            regenerate() was called again for March's finished job, and the program stopped: a \
            finished operation is never added to a queue again. Make a new job from its title and \
            sections.
            """)
        _ = generator.regenerate(job) { report in
            if report.title == "March" { marchAgain.open() }
        }
        generator.queue.isSuspended = false
        guard marchAgain.wait(timeout: patience) else {
            LastWords.fail(
                "regenerate",
                """
                March was built again with regenerate() after June was asked for, and no report \
                for March arrived (waited \(patience.seconds) s); the ledger saw \(ledger.loads.timeline).
                """)
        }
        let later = Array(ledger.loads.all.dropFirst(loadsBefore))
        guard later == ["June/sales", "March/sales"] else {
            LastWords.fail(
                "regenerate",
                """
                June was asked for, its caller lowered its priority, and then March was built again \
                with regenerate(); the ledger loaded \(later), expected June first. A regenerated \
                report is a new report of the same generator: it joins the generator's chain like \
                any other, or a width-one queue builds it first, as the ready operation of higher \
                priority. \(lesson.see("An operation runs once"))
                """)
        }
        withExtendedLifetime(june) {}
    }
}

extension LifetimeScenario {
    /// Asks, on the main queue, for April's report again while its first job still waits.
    static func regenerateWhileQueued() {
        let ledger = Ledger()
        let generator = ReportGenerator(source: ledger)
        generator.queue.isSuspended = true
        let first = Gate("the first report for April")
        let job = generator.generate("April", sections: ["sales"]) { _ in first.open() }
        let returned = Gate("regenerate() to return")
        let again = Gate("the regenerated report")
        let april = Protected<[String]?>(nil)
        let second = Protected<ReportJob?>(nil)
        LastWords.note(
            "regenerateWhileQueued",
            """
            regenerate() was called on the main queue for April's job while that job still \
            waited in the (suspended) ledger queue, and the program stopped before it returned.
            """)
        DispatchQueue.main.async {
            let made = generator.regenerate(job) { report in
                if report.title == "April" {
                    april.withValue { $0 = report.sections.map(\.name) }
                    again.open()
                }
            }
            second.withValue { $0 = made }
            returned.open()
        }
        guard returned.wait(timeout: patience) else {
            LastWords.fail(
                "regenerateWhileQueued",
                """
                regenerate() was called on the main queue for April's job while that job still \
                waited in the (suspended) ledger queue, and it had not returned \
                \(patience.seconds) s later: it waits for the job, which freezes the screen, or \
                deadlocks if the job needs the main queue.
                """)
        }
        generator.queue.isSuspended = false
        guard again.wait(timeout: patience) else {
            LastWords.fail(
                "regenerateWhileQueued",
                """
                regenerate() returned, but once the ledger queue went on no regenerated report for \
                April arrived (waited \(patience.seconds) s); the ledger saw \(ledger.loads.timeline).
                """)
        }
        guard april.value == ["sales"] else {
            LastWords.fail(
                "regenerateWhileQueued",
                """
                The regenerated report for April held the sections \(april.value ?? []); expected \
                [\"sales\"], the sections the first job was asked for. That job had not run yet, so \
                it had no report to copy them from.
                """)
        }
        guard second.value !== job else {
            LastWords.fail(
                "regenerateWhileQueued",
                """
                regenerate() returned April's first job itself, which had not run yet, instead of a \
                new one: whoever asked for the first report and whoever asked again now share one \
                operation and one delivery. An operation is built for one run; make a new job from \
                the old one's inputs, whatever state the old one is in. \(lesson.see("An operation runs once"))
                """)
        }
        guard first.wait(timeout: patience) else {
            LastWords.fail(
                "regenerateWhileQueued",
                """
                The regenerated report for April arrived, but the first one, asked for before \
                regenerate() while its job still waited, never did (waited \(patience.seconds) s; the \
                ledger saw \(ledger.loads.timeline)): regenerate() replaced the first job's delivery, \
                or cancelled the first job. Building a report again adds a new job beside the old \
                one and leaves the old one, and its caller, alone. \(lesson.see("An operation runs once"))
                """)
        }
    }
}

@Suite("Finished operations let go of what they held", .watched)
struct LifetimeSpecs {
    // Once a report is delivered, nothing should keep its job or its sections in memory. Look at
    // what ReportGenerator keeps, and what the completion block in generate() captures. See
    // "Completion blocks and cycles".
    // Covers: C66, C65
    // Paths: memory, collaborators
    @Test(
        "a delivered report's job and sections are freed once nobody holds them, and each of a hundred reports asked for one after another is delivered"
    )
    func deliveredReportIsFreed() async {
        let ledger = Ledger()
        let generator = ReportGenerator(source: ledger)
        let delivered = Recorder<String>()
        let watch = Watch()
        do {
            let job = generator.generate("March", sections: ["sales", "costs"]) { report in
                delivered.record(report.title)
            }
            watch.add(job, as: "March's job")
        }
        await waitUntil("March's report to be delivered", hint: lesson.see("Completion blocks and cycles")) {
            delivered.count == 1
        }
        let freed = await comesTrue(within: patience) {
            watch.alive.isEmpty && ledger.reportsInMemory.isEmpty
        }
        #expect(
            freed,
            """
            March's report was delivered and the spec let go of everything, yet after \
            \(patience.seconds) s these were still in memory: \(watch.alive + ledger.reportsInMemory.map { "\($0)'s sections" }). \
            Something still holds the job: the generator, a dependent that keeps it in its \
            dependencies, or a completion block that captures it strongly (a cycle that Linux \
            never breaks; Apple platforms clear completionBlock once it starts, so there only the \
            other holders show).
            \(lesson.see("Completion blocks and cycles"))
            """
        )

        // Then reports one after another, each asked for once the one before was delivered: a
        // new job often gets the address, and so the ObjectIdentifier, of a job just freed.
        var lost: String?
        for index in 1...100 {
            let title = "Report \(index)"
            generator.generate(title, sections: ["sales"]) { report in delivered.record(report.title) }
            guard await comesTrue(within: patience, { delivered.contains(title) }) else {
                lost = title
                break
            }
        }
        #expect(
            lost == nil,
            """
            Reports were asked for one after another, each once the one before had been delivered; \
            \(lost ?? "one") was never delivered (waited \(patience.seconds) s). Something remembers \
            finished jobs by ObjectIdentifier (a set of delivered jobs, say): an identifier is unique \
            only while its object lives, and a new job often gets the address of one just freed, so \
            it is taken for the old one. Remember a job by the job itself, weakly, or by nothing.
            \(lesson.see("What dependencies keep alive"))
            """
        )
        withExtendedLifetime(generator) {}
    }

    // Keeping the newest job must not keep every earlier one: look at what a ReportJob still
    // holds after it has run (its dependencies). See "What dependencies keep alive". The
    // reports are still built in the order asked for, even when a caller lowers the first
    // one's priority: what makes each wait for the one before?
    // Covers: C65, C100
    // Paths: memory, values
    @Test(
        "holding the newest report's job does not keep the earlier reports in memory, and the reports are built in the order asked for, whatever their priority"
    )
    func newestJobDoesNotKeepEarlierOnes() async {
        let ledger = Ledger()
        let generator = ReportGenerator(source: ledger)
        let delivered = Recorder<String>()
        let watch = Watch()
        let months = ["January", "February", "March"]
        // Suspended, so that every job is asked for before the first one finishes.
        generator.queue.isSuspended = true
        var newest: ReportJob?
        for month in months {
            let job = generator.generate(month, sections: ["sales"]) { report in
                delivered.record(report.title)
            }
            watch.add(job, as: "\(month)'s job")
            newest = job
        }
        // January's caller lowers its priority after asking (a report nobody looks at yet): the
        // chain still builds it first. (Linux re-sorts a waiting operation whose priority
        // changes; Apple documents no promise either way, so there only the chain is judged.)
        (generator.queue.operations.first { ($0 as? ReportJob)?.title == "January" })?.queuePriority = .veryLow
        generator.queue.isSuspended = false
        await waitUntil(
            "all three reports to be delivered", hint: lesson.see("What dependencies keep alive")
        ) { delivered.count == 3 }

        let order = ledger.loads.all
        #expect(
            order == ["January/sales", "February/sales", "March/sales"],
            """
            January, February and March were asked for in that order, and January's caller then \
            lowered its priority while it waited; the ledger loaded \(order). A width-one queue \
            starts the ready operation of highest priority first and promises no order by arrival: \
            only a dependency on the generator's previous report keeps them in the order asked for.
            \(lesson.see("What dependencies keep alive"))
            """
        )
        let freed = await comesTrue(within: patience) {
            watch.alive == ["March's job"] && ledger.reportsInMemory == ["March"]
        }
        let dependencies = newest?.dependencies.count ?? 0
        let holder =
            dependencies > 0
            ? """
            March's job still has \(dependencies) dependencies: a job holds its dependencies \
            strongly, and Foundation never lets go of them, so one chain keeps every finished \
            report alive.
            """
            : """
            March's job has no dependencies left, so something else holds the earlier jobs: a \
            list or property of the generator, or a completion block that captures its own job.
            """
        #expect(
            freed,
            """
            The spec kept only March's job, the newest. After \(patience.seconds) s these were \
            still in memory: \(watch.alive + ledger.reportsInMemory.map { "\($0)'s sections" }); \
            expected only March's job and sections. \(holder)
            \(lesson.see("What dependencies keep alive"))
            """
        )

        withExtendedLifetime((generator, newest)) {}
    }

    // A job cancelled before it ran never runs main(). Look at every exit of a job and a digest:
    // where do they let go of their dependencies, and when does a completion block clear itself?
    // See "What dependencies keep alive".
    // Covers: C65, C66
    // Paths: memory, collaborators
    @Test(
        "jobs cancelled before they ran, one by one or all at once, keep nothing in memory, their callers included, even while a cancelled job is held"
    )
    func cancelledJobsLetGo() async {
        let ledger = Ledger()
        let generator = ReportGenerator(source: ledger)
        let delivered = Recorder<String>()
        let watch = Watch()
        // Suspended, so that every job is asked for, and cancelled, before the first one runs.
        generator.queue.isSuspended = true
        defer { generator.queue.isSuspended = false }  // lets a digest that waits for its parts end
        do {
            watch.add(
                generator.generate("January", sections: ["sales"]) { delivered.record($0.title) }, as: "January's job")
        }
        let callers = CallerWatch()
        let february: ReportJob
        do {
            let caller = Caller("February's caller")
            callers.add(caller)
            february = generator.generate("February", sections: ["sales"], then: caller.deliver(into: delivered))
        }
        do {
            watch.add(
                generator.generate("March", sections: ["sales"]) { delivered.record($0.title) }, as: "March's job")
        }
        february.cancel()
        let digest: DigestJob
        do {
            let caller = Caller("the Q2 digest's caller")
            callers.add(caller)
            guard
                let asked = await digestOnItsOwnThread(
                    generator, "Q2", of: ["April", "May"], sections: ["sales"], then: caller.deliver(into: delivered))
            else { return }
            digest = asked
        }
        digest.cancel()
        generator.queue.isSuspended = false
        await waitUntil(
            "January's and March's reports to be delivered, and the cancelled digest to finish",
            hint: lesson.see("What dependencies keep alive"),
            givingUpWhen: {
                delivered.contains("February")
                    ? "February's report was delivered, although February's job was cancelled before it ran" : nil
            }
        ) { delivered.contains("January") && delivered.contains("March") && digest.isFinished }
        let heldFreed = await comesTrue(within: patience) {
            watch.alive.isEmpty && ledger.reportsInMemory.isEmpty && callers.alive.isEmpty
        }
        #expect(
            heldFreed,
            """
            February's job and the Q2 digest were cancelled before they ran, and the spec still \
            holds both (a screen keeps a job it may build again). \(patience.seconds) s after the \
            others were delivered, these were still in memory: \(watch.alive + ledger.reportsInMemory.map { "\($0)'s sections" } + callers.alive); \
            February's job still has \(february.dependencies.count) dependencies and the digest \
            \(digest.dependencies.count). Foundation never calls main() of an operation cancelled \
            before it started, so a job that lets go of its dependencies only in main() keeps the \
            finished jobs before it, and every report they hold, for as long as anyone holds it. \
            The completion block runs on every exit, a cancelled one too: let go there as well. \
            A caller still in memory is held by its deliver closure: by a completion block that \
            the held job never cleared (Linux never clears it), or by a list of callers that \
            forgets one only when its report is delivered.
            \(lesson.see("What dependencies keep alive"))
            """
        )

        // Cancelled all at once: nobody holds these, so nothing of them may stay.
        let everything = Watch()
        generator.queue.isSuspended = true
        do {
            for month in ["June", "July"] {
                let caller = Caller("\(month)'s caller (cancelled with cancelAllOperations)")
                callers.add(caller)
                everything.add(
                    generator.generate(month, sections: ["sales"], then: caller.deliver(into: delivered)),
                    as: "\(month)'s job (cancelled with cancelAllOperations)")
            }
            guard
                let q3 = await digestOnItsOwnThread(
                    generator, "Q3", of: ["August", "September"], sections: ["sales"],
                    then: { delivered.record($0.title) })
            else { return }
            everything.add(q3, as: "the Q3 digest (cancelled with cancelAllOperations)")
            for part in q3.dependencies {
                everything.add(part, as: "a part of Q3 (cancelled with cancelAllOperations)")
            }
        }
        generator.queue.cancelAllOperations()
        generator.queue.isSuspended = false
        let allFreed = await comesTrue(within: patience) { everything.alive.isEmpty && callers.alive.isEmpty }
        #expect(
            allFreed,
            """
            June, July and the Q3 digest were cancelled with cancelAllOperations() before they \
            ran, and nobody held them; \(patience.seconds) s later these were still in memory: \
            \(everything.alive + callers.alive). Something keeps a job, or its caller's deliver \
            closure, only on the cancel path: a completion block that captures its job and clears \
            itself only after delivering a report (a cycle Linux never breaks), or a list of pending \
            jobs or callers that forgets one only when its report arrives.
            \(lesson.see("Completion blocks and cycles"))
            """
        )
        withExtendedLifetime((generator, february, digest)) {}
    }

    // A screen asks for a report again from the main queue, often before the first job ran.
    // Read ReportGenerator.regenerate: does it wait for anything, and what happens to the first
    // job and its caller? See "Waiting on the main queue".
    // Covers: C63, C67
    // Paths: reuse, interference, collaborators
    @Test(
        "regenerate() on the main queue, while the first job still waits, returns a new job at once; both reports come later"
    )
    func regenerateWhileQueuedDoesNotWait() async {
        LastWords.forget("regenerateWhileQueued")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected regenerate() of a job that had not run yet, called on the main queue, to \
            return a new job at once, and both the first report and the new one to arrive once \
            the queue went on.
            \(lesson.see("Waiting on the main queue"))
            """
        ) {
            LifetimeScenario.regenerateWhileQueued()
        }
        LastWords.explain("regenerateWhileQueued", outcome)
    }

    // An operation runs once. Read ReportGenerator.regenerate: what does it hand to the queue,
    // and does the new job wait for the reports asked for before it, like any other report?
    // See "An operation runs once".
    // Covers: C67, C100
    // Paths: reuse
    @Test(
        "regenerate() builds the report again with a new job, also for a job cancelled before it ran, without stopping the program, after the reports asked for before it"
    )
    func regenerateMakesANewJob() async {
        LastWords.forget("regenerate")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Expected regenerate() of a finished job to deliver a second, freshly loaded report, \
            built after a report asked for before it whose priority was lowered. Adding a finished \
            operation to a queue stops the program.
            \(lesson.see("An operation runs once"))
            """
        ) {
            LifetimeScenario.regenerate()
        }
        LastWords.explain("regenerate", outcome)
    }
}
