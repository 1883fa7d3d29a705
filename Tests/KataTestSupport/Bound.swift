import Foundation
import Testing

/// The limits every wait in a spec stays within.
///
/// Every bound is multiplied by `KATA_TIME_SCALE` (default 1): set it to 2 or 3 on a slow or
/// shared machine, where correct code may need longer to show what a spec waits for.
public enum Bound {
    /// The factor from `KATA_TIME_SCALE` that stretches every bound; 1 when unset or invalid.
    public static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["KATA_TIME_SCALE"],
            let factor = Double(text), factor > 0
        else { return 1 }
        return factor
    }()

    /// How long a spec waits for something that should happen at once.
    public static let standard: Duration = scaled(.seconds(2))

    /// `duration` stretched by `scale`: use it for every wait and window a spec defines itself.
    public static func scaled(_ duration: Duration) -> Duration {
        duration * scale
    }
}

/// Waits, suspending, until `condition` holds; records an issue naming `event` if it never does.
///
/// - Parameters:
///   - event: What the spec is waiting for, phrased so that "… never happened" reads well.
///   - timeout: How long to wait; `Bound.standard` unless the spec has a reason.
///   - hint: The lesson to learn if it never happens; appended to the issue.
///   - verdict: Says why the event can no longer happen (the operation finished without it,
///     the queue drained), or nil while it still can. The wait then fails at once, naming the
///     reason, instead of running out its bound.
///   - condition: Checked repeatedly until it returns true or the time is up.
/// - Returns: Whether the condition came true in time.
@discardableResult
public func waitUntil(
    isolation: isolated (any Actor)? = #isolation,
    _ event: @autoclosure () -> String,
    timeout: Duration = Bound.standard,
    hint: @autoclosure () -> String = "",
    givingUpWhen verdict: () -> String? = { nil },
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if let reason = verdict() {
            if condition() { return true }  // it happened just before the verdict
            record("Expected \(event()), but \(reason).", hint(), sourceLocation)
            return false
        }
        if ContinuousClock.now >= deadline {
            recordTimeout(event(), timeout, hint(), sourceLocation)
            return false
        }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// Checks `condition` until it holds or `timeout` passes, recording nothing either way.
///
/// For the rare spec where correct code must *not* let something happen within a window;
/// everywhere else, `waitUntil` names what never happened.
public func comesTrue(
    isolation: isolated (any Actor)? = #isolation,
    within timeout: Duration,
    _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// Waits, blocking the calling thread, until `condition` holds; records an issue if it never does.
///
/// Use it only in synchronous code, such as a spec that must call `waitUntilFinished()`.
@discardableResult
public func blockUntil(
    _ event: @autoclosure () -> String,
    timeout: Duration = Bound.standard,
    hint: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) -> Bool {
    if settles(within: timeout, condition) { return true }
    recordTimeout(event(), timeout, hint(), sourceLocation)
    return false
}

/// Blocks until `condition` holds or `timeout` passes, recording nothing; returns whether it held.
///
/// For synchronous code whose outcome another party judges, such as an exit test's child
/// process, which reports through its exit status.
public func settles(within timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        Thread.sleep(forTimeInterval: 0.001)
    }
    return true
}

/// Ends the process with `status` if it is still running after `timeout`.
///
/// An exit test's child calls it first, so that code which deadlocks is reported through the
/// exit status instead of hanging the spec: exit tests have no time limit of their own.
public func exitIfStillRunning(after timeout: Duration, status: Int32) {
    Thread.detachNewThread {
        Thread.sleep(forTimeInterval: timeout.timeInterval)
        exit(status)
    }
}

private func recordTimeout(
    _ event: String, _ timeout: Duration, _ hint: String, _ sourceLocation: SourceLocation
) {
    let seconds = String(format: "%g", timeout.timeInterval)
    record("Waited \(seconds) s for \(event), but it never happened.", hint, sourceLocation)
}

private func record(_ message: String, _ hint: String, _ sourceLocation: SourceLocation) {
    let text = hint.isEmpty ? message : message + "\n" + hint
    Issue.record(Comment(rawValue: text), sourceLocation: sourceLocation)
}

/// Runs `body` on a thread of its own and waits, suspending and bounded, until it returns.
///
/// For a call into learner code that may block for good (a lock held across a wait, a
/// deadlock): blocked, it holds that thread only, never one of the few threads that every async
/// spec of the run shares. The spec must not touch what `body` may still hold afterwards.
///
/// - Returns: What `body` returned, or nil after recording an issue naming `call` if it never did.
public func callOnItsOwnThread<Value: Sendable>(
    isolation: isolated (any Actor)? = #isolation,
    _ call: @autoclosure () -> String,
    timeout: Duration = Bound.standard,
    hint: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Value
) async -> Value? {
    let outcome = Protected<Value?>(nil)
    Thread.detachNewThread {
        let value = body()
        outcome.withValue { $0 = value }
    }
    let returned = await waitUntil(
        "\(call()) to return", timeout: timeout, hint: hint(), sourceLocation: sourceLocation
    ) { outcome.value != nil }
    return returned ? outcome.value : nil
}
