import Chapter4
import Foundation
import KataTestSupport
import Testing

@Suite("Waiting for an operation started by hand does not burn a processor")
struct WaitingTests {
    /// How long the awaited operation is kept running while the waiter is measured.
    static let window: Duration = .milliseconds(300)

    /// The most processor time a wait may use, as a share of the time it waited.
    ///
    /// A blocking wait uses almost none; a loop on `isFinished` uses a whole core, and still
    /// far more than this when it shares the core with other busy threads.
    static let allowedShare = 0.2

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
        let cpu = Self.milliseconds(cost.cpu)
        let wall = Self.milliseconds(cost.wall)
        #expect(
            cpu <= wall * Self.allowedShare,
            """
            wait(for:) used \(Int(cpu)) ms of processor time while waiting \(Int(wall)) ms for \
            the operation; a blocking wait uses almost none (at most \(Int(Self.allowedShare * 100))% \
            allowed). Polling isFinished in a loop burns a core: block on waitUntilFinished() \
            instead. \(lesson.see("Waiting without spinning"))
            """)
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
