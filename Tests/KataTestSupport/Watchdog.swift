import Foundation
import Testing

/// Names a spec that never ends, and ends the run, so that a learner's hang costs only its spec.
///
/// Swift Testing cannot abandon a test whose thread is blocked: `.timeLimit` cancels the test's
/// task, which a thread waiting on a semaphore or a lock never notices, and its limit counts in
/// whole minutes. Measured on Linux (Swift 6.3.1, 2 cores): a suite marked `.timeLimit(.minutes(1))`
/// whose two tests wait on semaphores ran for more than seven minutes without recording the
/// limit, and a third, passing test never reported, since the two blocked threads were the
/// whole cooperative pool.
///
/// Every top-level suite carries this trait (`@Suite("…", .watched)`), which applies it to each
/// test case inside. A thread of its own, outside the cooperative pool, looks at the running
/// test cases twice a second. When one has run for longer than `limit`, it waits until every
/// other running test case has ended or run out of time too, prints which specs never ended and
/// why that usually happens, and ends the process with status 3. Every other spec's verdict has
/// been printed by then. `Scripts/grade` and `Scripts/verify` recognise the message and report
/// the spec as hung. The same thread ends the process when the process that started it (`swift
/// test`, a script) is gone, so that a stopped run leaves no specs running behind it, and either
/// way it ends the exit tests' child processes first.
public struct Watchdog: TestTrait, SuiteTrait, TestScoping {
    /// How long one test case may run: 20 s, stretched by `KATA_TIME_SCALE`. Far above every
    /// spec's own bound (`Bound.standard`, 2 s), so that only a test case that cannot end is
    /// stopped.
    public static let limit: Duration = Bound.scaled(.seconds(20))

    /// The line the message starts with, which the scripts look for.
    public static let marker = "⏱ The run was stopped:"

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil, !test.isSuite else {
            try await function()
            return
        }
        let ticket = Watch.shared.begin(test)
        defer { Watch.shared.end(ticket) }
        try await function()
    }
}

extension Trait where Self == Watchdog {
    /// Ends the run, naming the spec, when a test case inside never ends (see `Watchdog`).
    public static var watched: Watchdog { Watchdog() }
}

/// The test cases under way, and the thread that watches them.
private final class Watch: @unchecked Sendable {  // every stored property is guarded by `lock`
    static let shared = Watch()

    private struct Running {
        let title: String
        let function: String
        let module: String
        let started: ContinuousClock.Instant
    }

    private let lock = NSLock()
    private var running: [Int: Running] = [:]
    private var nextTicket = 0
    private var watcher: Thread?

    func begin(_ test: Test) -> Int {
        lock.withLock {
            nextTicket += 1
            running[nextTicket] = Running(
                title: test.displayName ?? test.name,
                function: test.name,
                module: test.sourceLocation.moduleName,
                started: .now
            )
            if watcher == nil {
                let thread = Thread { [unowned self] in self.watch() }
                thread.name = "kata watchdog"
                watcher = thread
                thread.start()
            }
            return nextTicket
        }
    }

    func end(_ ticket: Int) {
        _ = lock.withLock { running.removeValue(forKey: ticket) }
    }

    private func watch() {
        let parent = getppid()
        while true {
            Thread.sleep(forTimeInterval: 0.5)  // the watchdog's own beat; no spec waits on it
            // `swift test` runs the specs in a process group of their own and passes on Ctrl-C,
            // but a SIGTERM or SIGKILL ends it alone (measured on Linux, SwiftPM 6.3.1): a run
            // stopped that way must not leave its specs running without it.
            if getppid() != parent {
                endChildren()
                exit(EXIT_FAILURE)
            }
            let now = ContinuousClock.now
            let (overdue, others) = lock.withLock {
                let late = running.values.filter { now - $0.started > Watchdog.limit }
                return (late, running.count - late.count)
            }
            // Stop only once nothing else can still end on its own, so that every verdict
            // that can be reported has been.
            guard !overdue.isEmpty, others == 0 else { continue }
            report(overdue.sorted { $0.started < $1.started })
            endChildren()
            exit(3)
        }
    }

    /// Ends this process's children: the exit tests' child processes under way. A child is not
    /// ended with its parent, so one that hangs would otherwise run on for good after the run
    /// was stopped (measured on Linux, Swift 6.3.1: a child whose body never returns was still
    /// running after its parent ended with status 3; with this, none was). `pkill -P` selects
    /// by parent on macOS and Linux alike.
    private func endChildren() {
        let tool = ["/usr/bin/pkill", "/bin/pkill"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tool else { return }
        let pkill = Process()
        pkill.executableURL = URL(fileURLWithPath: tool)
        pkill.arguments = ["-KILL", "-P", String(getpid())]
        do {
            try pkill.run()
            pkill.waitUntilExit()
        } catch {
            return
        }
    }

    private func report(_ overdue: [Running]) {
        let seconds = Int(Watchdog.limit.components.seconds)
        var text = "\n\(Watchdog.marker) "
        text +=
            overdue.count == 1
            ? "this spec did not end within \(seconds) s:\n"
            : "these specs did not end within \(seconds) s (the first one started first):\n"
        for spec in overdue {
            let name = spec.function.prefix { $0 != "(" }
            let chapter = spec.module.filter(\.isNumber)
            text += "  ✘ \"\(spec.title)\"\n"
            text += "    alone: KATA_CHAPTER=\(chapter) swift test --filter \"\(spec.module).*\(name)\"\n"
        }
        text += """
            Something it called waits forever: a deadlock (a lock or a queue waiting on itself), \
            a wait with no bound (a semaphore, waitUntilFinished(), a continuation never \
            resumed), or a thread kept busy. A spec that blocks a thread can also starve others \
            of threads on a machine with few cores, so fix the first one named and run again. \
            Every other spec's verdict is above; specs of a one-at-a-time suite that had not \
            started are not. Run a spec alone, as shown, to see where it stops.

            """
        FileHandle.standardError.write(Data(text.utf8))
    }
}
