import Chapter3
import Foundation
import KataTestSupport
import Testing

@Suite("A greeting that is over stays over, and greets whoever it is given", .watched)
struct OverStaysOver {
    // Look at the order of the checks at the top of AsyncOperation.start(): what does a start()
    // find on a greeting that was cancelled and has already finished? Read "Finish once, on
    // every path".
    // Covers: C21
    // Paths: reuse
    @Test(
        "start() called again on a greeting cancelled before it started announces nothing more and launches nothing",
        .preflightStartingCancelledAgain)
    func cancelledStartingAgainChangesNothing() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace, pause: Pause(open: true))
        greeting.cancel()
        for call in 1...3 {
            let returned: Void? = await callOnItsOwnThread(
                "start() call \(call) on the cancelled greeting",
                hint: trace.lifecycle(missing: "…") + "\n" + lesson.see("Finish once, on every path")
            ) { greeting.start() }
            guard returned != nil else { return }
        }
        guard await waitForWorkQueue(of: greeting) else { return }

        let finished = greeting.announced(.isFinished), executing = greeting.announced(.isExecuting)
        #expect(
            finished == [true] && !executing.contains(true) && !trace.contains(.workPaused) && greeting.isFinished,
            """
            A greeting cancelled before it started was started three times. Expected isFinished \
            announced once (true), isExecuting never announced as true, and no work; announced isFinished \(finished), \
            isExecuting \(executing), and the work \(trace.contains(.workPaused) ? "began" : "never began"). \
            The first start() finished it; a later one must find it finished before anything else \
            and return. \(trace.lifecycle(missing: "…"))
            \(lesson.see("Finish once, on every path"))
            """)
    }

    // Look at cancel(), if you override it, and at finish(): what does a cancel() that comes after
    // the end change? Read "Finish once, on every path" and "Cancelling a running operation".
    // Covers: C24
    // Paths: reuse
    @Test(
        "cancel() on a greeting that already finished changes nothing, announces nothing and keeps the greeting",
        .preflightCancellingAfterTheEnd)
    func cancelAfterTheEndChangesNothing() async {
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(trace: trace, pause: Pause(open: true))
        let queue = makeQueue()
        queue.enqueue([greeting])
        guard await waitForFinished(greeting) else { return }
        guard await waitUntil("the queue to drain (operationCount 0)", { queue.operationCount == 0 }) else { return }
        let finishedAnnounced = greeting.announced(.isFinished)
        // Whether the finish was announced once is another spec's (finishingAgainChangesNothing).
        guard !finishedAnnounced.isEmpty, finishedAnnounced.allSatisfy({ $0 }) else {
            Issue.record(
                """
                This spec cancels a greeting that finished as it should, so it needs isFinished \
                announced with the flag already true; the greeting announced isFinished \
                \(finishedAnnounced). \(announcedBeforeTheFlag(trace))
                """)
            return
        }
        let before = greeting.announcements.count
        trace.record(.cancelCalled)
        let returned: Void? = await callOnItsOwnThread(
            "cancel() on the finished greeting",
            hint: trace.lifecycle(missing: "…") + "\n" + lesson.see("Cancelling a running operation")
        ) { greeting.cancel() }
        guard returned != nil else { return }

        let extra = greeting.announcements.all.dropFirst(before).map(\.description)
        #expect(
            extra.isEmpty && greeting.isFinished && !greeting.isExecuting
                && greeting.greeting == "Hello, Ada! Goodbye, Ada!",
            """
            cancel() came after the greeting had finished. Expected nothing to change: no \
            announcement, isFinished true, isExecuting false and the greeting kept. It announced \
            \(extra), and reported isFinished \(greeting.isFinished), isExecuting \(greeting.isExecuting), \
            greeting \(String(describing: greeting.greeting)). A cancel() that finishes the operation \
            itself must go through the same guarded step as finish(). \(trace.lifecycle(missing: "…"))
            \(lesson.see("Finish once, on every path"))
            """)
    }

    // Look at how GreetingOperation builds its greeting from `person`: is the name used as it
    // was given (not cut, re-cased or read as a format)? Read "The pattern".
    // Covers: C17
    // Paths: values
    @Test(
        "a dependent of the greeting finds the person it was given named whole, whatever the name's length",
        .preflight, arguments: PersonName.all)
    func greetsWhoeverItIsGiven(name: PersonName) async {
        let person = name.person
        let trace = Recorder<Moment>()
        let greeting = TracedGreeting(person: person, trace: trace)
        defer { greeting.pause.open() }
        let found = Protected<String?>(nil)
        let dependent = BlockOperation {
            found.withValue { $0 = greeting.greeting }
            trace.record(.sentinelRan)
        }
        dependent.addDependency(greeting)
        makeQueue().enqueue([greeting, dependent])
        guard await releaseAfterStartReturned(greeting, see: "The pattern") else { return }
        guard
            await waitForEffect(
                .sentinelRan, of: greeting, "the operation that depends on the greeting to run",
                why: "Nobody heard that the greeting finished: announce isFinished after setting the flag.")
        else { return }
        let expected = "Hello, \(person)! Goodbye, \(person)!"
        #expect(
            found.value == expected,
            """
            An operation that depends on the greeting for \(name.testDescription) found \
            \(found.value.map(PersonName.shown) ?? "nil"); expected \(PersonName.shown(expected)). Use the \
            name as given: whole, in its own letter case, and as text, never as a format string; and \
            store the greeting before finishing. \(trace.lifecycle(missing: "…"))
            \(lesson.see("The pattern"))
            """)
    }
}

/// A name to greet, with how a test's name shows it.
///
/// Names of every length and shape: a cap at any length, a change of case, or the name read as a
/// format string greets one of them wrongly.
struct PersonName: Sendable, CustomTestStringConvertible {
    let person: String
    let testDescription: String

    static let all: [PersonName] = [
        PersonName(person: "Li", testDescription: "“Li”"),
        PersonName(person: "Bartholomew Higginbotham", testDescription: "“Bartholomew Higginbotham”"),
        PersonName(person: "Zoë Ngọc Ánh", testDescription: "“Zoë Ngọc Ánh”"),
        PersonName(person: "ada lovelace", testDescription: "“ada lovelace”, in lower case"),
        PersonName(person: "Ada 100% %@ %d", testDescription: "“Ada 100% %@ %d”, with per-cent signs"),
        PersonName(
            person: String(repeating: "Maria von Hohenzollern-Sigmaringen ", count: 60) + "the Last",
            testDescription: "a name of 2,108 characters"),
        PersonName(
            person: String(repeating: "Maria von Hohenzollern-Sigmaringen ", count: 2_000) + "the Very Last",
            testDescription: "a name of 70,013 characters"),
        PersonName(
            person: " Ada Lovelace\t", testDescription: "“ Ada Lovelace\\t”, with a space before and a tab after"),
    ]

    /// The text in quotes, or its beginning and its length when it is long.
    static func shown(_ text: String) -> String {
        text.count <= 80 ? "“\(text)”" : "“\(text.prefix(60))…” (\(text.count) characters)"
    }
}

@Suite("Two greetings leave each other alone", .watched)
struct TwoGreetings {
    // Two greetings on one queue: one is cancelled, the other is not, then a third comes. Look at
    // where AsyncOperation keeps its flags and GreetingOperation its greeting and what it knows of
    // cancellation: in each instance, or somewhere every greeting shares (a static, a global)?
    // Read "One critical section for all the state".
    // Covers: C19, C24
    // Paths: interference, reuse
    @Test(
        "cancelling and finishing one greeting leaves another running one alone, and a later greeting still greets",
        .preflight)
    func oneGreetingLeavesAnotherAlone() async {
        // In a process of its own: state every greeting shares would otherwise be set and reset by
        // the specs running beside it, and decide this verdict.
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The child process that ran two greetings side by side stopped before it could judge \
            (exit code 3: something never finished). \(lesson.see("One critical section for all the state"))
            """
        ) {
            await TwoGreetings.runSideBySide()
        }
        LastWords.explain(outcome)
    }

    // While one greeting announces that it finished, the spec reads another greeting's state from
    // a third thread. Look at the lock AsyncOperation guards its flags with: one per greeting, or
    // one that every greeting shares (a static, a global)? Read "One critical section for all the
    // state".
    // Covers: C19
    // Paths: interference
    @Test("while one greeting announces its finish, another greeting's state answers at once", .preflight)
    func anotherGreetingAnswersWhileOneAnnounces() async {
        let trace = Recorder<Moment>()
        let other = GreetingOperation(person: "Grace")
        let answered = Protected<Bool?>(nil)
        // At the announcement of isFinished, hold the announcing thread while a reader reads the other greeting.
        let greeting = TracedGreeting(trace: trace, pause: Pause(open: true)) { announcement in
            guard !announcement.isWill, announcement.key == .isFinished, announcement.value,
                answered.value == nil
            else { return }
            let began = DispatchSemaphore(value: 0), returned = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                began.signal()
                _ = other.isFinished
                _ = other.isExecuting
                returned.signal()
            }
            _ = began.wait(timeout: .now() + Bound.standard.timeInterval)
            let inTime = returned.wait(timeout: .now() + Bound.standard.timeInterval) == .success
            answered.withValue { $0 = inTime }
        }
        makeQueue().enqueue([greeting])
        guard await waitForFinished(greeting) else { return }
        let finishedAnnounced = greeting.announced(.isFinished)
        // The reader is sent from an announcement of the finish; one made before the flag flipped
        // (false) is another spec's mistake, and a later one may or may not come.
        guard !finishedAnnounced.isEmpty, finishedAnnounced.allSatisfy({ $0 }) else {
            Issue.record(
                """
                This spec reads another greeting while this one announces its finish, so it needs \
                isFinished announced with the flag already true; the greeting announced isFinished \
                \(finishedAnnounced). \(announcedBeforeTheFlag(trace))
                """)
            return
        }
        let see = lesson.see("One critical section for all the state")
        guard
            await waitUntil(
                "a reader of another greeting to be sent while this one announced isFinished", hint: see,
                { answered.value != nil })
        else { return }
        #expect(
            answered.value == true,
            """
            While one greeting announced isFinished, a thread read isFinished and isExecuting of \
            another greeting that never started; the read did not return within \
            \(Bound.standard.timeInterval) s, until the announcement ended. The two greetings share the \
            lock of their state (a static or a global): every reader of any greeting waits for \
            whatever one greeting's announcement runs, and an observer that waits for another \
            operation there never returns. Give each instance its own lock. \(trace.lifecycle(missing: "…"))
            \(see)
            """)
    }

    /// Runs two greetings at once, cancels one, lets the other end, then runs a third. Runs in an
    /// exit test, beside no other spec.
    static func runSideBySide() async {
        exitIfStillRunning(after: Bound.standard * 2, status: 3)
        let see = lesson.see("One critical section for all the state")
        let cancelledPause = Pause(), keptPause = Pause()
        let cancelledBegan = Protected(false), keptBegan = Protected(false)
        // Both with the default work queue, as a learner's code gets it.
        let cancelled = GreetingOperation(person: "Ada") {
            cancelledBegan.withValue { $0 = true }
            _ = cancelledPause.wait()
        }
        let kept = GreetingOperation(person: "Grace") {
            keptBegan.withValue { $0 = true }
            _ = keptPause.wait()
        }
        defer { keptPause.open() }
        let queue = makeQueue()
        queue.enqueue([cancelled, kept])
        guard await waitUntil("both greetings' work to begin", hint: see, { cancelledBegan.value && keptBegan.value })
        else { return }

        cancelled.cancel()
        cancelledPause.interrupt()
        // A cancel() that never makes isCancelled true reaches no work: say so rather than blame sharing.
        let cancelReached = cancelled.isCancelled
        let cancelCause =
            cancelReached
            ? see
            : """
            cancel() returned, yet the cancelled greeting's isCancelled still read false, so its work \
            could not learn of it. An overridden cancel() must make isCancelled true: call super.cancel(), \
            or set and announce an isCancelled of your own. \(lesson.see("Cancelling a running operation"))
            """
        guard await waitUntil("the cancelled greeting to finish", hint: cancelCause, { cancelled.isFinished }) else {
            return
        }
        #expect(
            kept.isExecuting && !kept.isFinished,
            """
            Two greetings were running; one was cancelled and finished. The other must still be \
            running; it reported isExecuting \(kept.isExecuting), isFinished \(kept.isFinished). Each \
            greeting's state belongs to that greeting alone. \(see)
            """)
        keptPause.open()
        guard await waitUntil("the greeting nobody cancelled to finish", hint: see, { kept.isFinished }) else { return }

        let later = GreetingOperation(person: "Lin")
        queue.addOperation(later)
        guard await waitUntil("a greeting started later to finish", hint: see, { later.isFinished }) else { return }
        #expect(
            cancelled.greeting == nil && kept.greeting == "Hello, Grace! Goodbye, Grace!"
                && later.greeting == "Hello, Lin! Goodbye, Lin!",
            """
            Of three greetings, only the first was cancelled. Expected no greeting from it, and the \
            full greetings from the one running beside it and from one started after it; they \
            published \(String(describing: cancelled.greeting)), \(String(describing: kept.greeting)) and \
            \(String(describing: later.greeting)). \(cancelled.greeting != nil && !cancelReached
                ? cancelCause
                : "A cancellation is a fact about one operation: kept anywhere shared (a static, a global), it reaches greetings nobody cancelled. \(see)")
            """)
    }
}

/// Why an `isFinished` announcement read false, for the specs that need it announced with the
/// flag already true, and where the lesson says so.
private func announcedBeforeTheFlag(_ trace: Recorder<Moment>) -> String {
    """
    An announcement that reads false comes before the flag flipped, or from the inherited \
    start(): super.start() announces isFinished around main() on its own. Flip the flag first, \
    then announce it, and never call super.start(). \(trace.lifecycle(missing: "…"))
    \(lesson.see("Announce every change, after the flag flips")) \
    \(lesson.see("Your own start(), never the inherited one"))
    """
}
