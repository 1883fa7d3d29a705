import Foundation
import Testing

/// The limits every wait in a spec stays within.
public enum Bound {
    /// How long a spec waits for something that should happen at once (seconds, not minutes).
    public static let standard: Duration = .seconds(5)
}

/// Waits, suspending, until `condition` holds; records an issue naming `event` if it never does.
///
/// - Parameters:
///   - event: What the spec is waiting for, phrased so that "… never happened" reads well.
///   - timeout: How long to wait; a few seconds at most.
///   - hint: The lesson to learn if it never happens; appended to the issue.
///   - condition: Checked repeatedly until it returns true or the time is up.
/// - Returns: Whether the condition came true in time.
@discardableResult
public func waitUntil(
    isolation: isolated (any Actor)? = #isolation,
    _ event: @autoclosure () -> String,
    timeout: Duration = Bound.standard,
    hint: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async -> Bool {
    if await comesTrue(within: timeout, condition) { return true }
    recordTimeout(event(), timeout, hint(), sourceLocation)
    return false
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
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline {
            recordTimeout(event(), timeout, hint(), sourceLocation)
            return false
        }
        Thread.sleep(forTimeInterval: 0.001)
    }
    return true
}

private func recordTimeout(
    _ event: String, _ timeout: Duration, _ hint: String, _ sourceLocation: SourceLocation
) {
    let seconds = String(format: "%g", timeout.timeInterval)
    var message = "Waited \(seconds) s for \(event), but it never happened."
    if !hint.isEmpty { message += "\n" + hint }
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
}
