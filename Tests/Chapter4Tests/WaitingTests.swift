import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("Waiting for an operation started by hand does not burn a processor")
struct WaitingTests {
    /// How long the awaited operation is kept running while the waiter is measured.
    static let window: Duration = .milliseconds(300)

    /// The most processor time a wait may use over the whole window.
    ///
    /// A blocking wait uses well under a millisecond. A loop on `isFinished` uses a core for the
    /// whole window when it has one, and still many times this bound when busy threads leave it
    /// a small share of a core.
    static let allowedCPU: Duration = .milliseconds(20)

    // `while !operation.isFinished {}` keeps a core at 100% for as long as the operation runs.
    // Block instead: waitUntilFinished() (or a completion signal) sleeps until it is finished.
    // Covers: C33
    @Test("wait(for:) sleeps until the operation finishes instead of polling isFinished")
    func waitingDoesNotSpin() async {
        let runner = ManualRunner()
        let release = Gate("the awaited operation's work")
        let operation = ThreadedOperation { release.wait() }
        operation.start()
        let waiting = Gate("the waiter")
        let measured = Protected<(cpu: Duration, wall: Duration)?>(nil)
        Thread.detachNewThread {
            waiting.open()
            let cost = CPUTime.measure { runner.wait(for: operation) }
            measured.withValue { $0 = cost }
        }
        await waitUntil("the waiting thread to begin") { waiting.isOpen }
        let clock = ContinuousClock()
        let windowEnds = clock.now + Self.window
        await waitUntil("the measuring window to pass") { clock.now >= windowEnds }
        release.open()
        await waitUntil(
            "wait(for:) to return once the operation had finished",
            hint: lesson.see("Waiting without spinning")
        ) { measured.value != nil }
        guard let cost = measured.value else { return }
        #expect(
            cost.cpu <= Self.allowedCPU,
            """
            wait(for:) used \(Self.milliseconds(cost.cpu)) ms of processor time while it waited \
            \(Self.milliseconds(cost.wall)) ms for the operation; a blocking wait uses almost none \
            (at most \(Self.milliseconds(Self.allowedCPU)) ms allowed). Polling isFinished in a \
            loop burns a core: block on waitUntilFinished() instead. \
            \(lesson.see("Waiting without spinning"))
            """)
    }

    /// The duration in whole milliseconds, for messages.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
