import Foundation

/// Holds async work by name until the spec releases it, without holding a thread.
///
/// A held wait suspends on a continuation. It ends when the spec releases its name or
/// everything, or, unless the caller ignores cancellation, as soon as its task is cancelled.
/// Each wait is resumed exactly once, whichever comes first. Test doubles of async APIs (a
/// fetcher, a camera card) hold their work here; a spec releases everything on its way out, so
/// no wait outlives the spec.
public final class Holds: @unchecked Sendable {  // `state` is only touched under `lock`
    private struct State {
        var released: Set<String> = []
        var releasedAll = false
        var waiting: [Int: (name: String, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var cancelled: Set<Int> = []
        var tickets = 0
    }

    private let lock = NSLock()
    private var state = State()  // protected by lock

    public init() {}

    /// Suspends until `name` is released; throws `CancellationError` as soon as the task is
    /// cancelled, unless `ignoringCancellation`, in which case only a release ends the wait.
    public func wait(for name: String, ignoringCancellation: Bool = false) async throws {
        let ticket = lock.withLock {
            state.tickets += 1
            return state.tickets
        }
        let hold = {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let answer: Result<Void, any Error>? = self.lock.withLock {
                    if self.state.cancelled.contains(ticket) { return .failure(CancellationError()) }
                    if self.state.releasedAll || self.state.released.contains(name) { return .success(()) }
                    self.state.waiting[ticket] = (name, continuation)
                    return nil
                }
                if let answer { continuation.resume(with: answer) }
            }
        }
        if ignoringCancellation { return try await hold() }
        try await withTaskCancellationHandler(operation: hold) {
            lock.withLock { _ = state.cancelled.insert(ticket) }
            resume(ticket, with: .failure(CancellationError()))
        }
    }

    /// Lets the waits for `name` end, now and from now on.
    public func release(_ name: String) {
        let tickets = lock.withLock {
            state.released.insert(name)
            return state.waiting.filter { $0.value.name == name }.map(\.key)
        }
        tickets.forEach { resume($0, with: .success(())) }
    }

    /// Lets every wait end, now and from now on.
    public func releaseAll() {
        let tickets = lock.withLock {
            state.releasedAll = true
            return Array(state.waiting.keys)
        }
        tickets.forEach { resume($0, with: .success(())) }
    }

    private func resume(_ ticket: Int, with result: Result<Void, any Error>) {
        let continuation = lock.withLock { state.waiting.removeValue(forKey: ticket)?.continuation }
        continuation?.resume(with: result)
    }
}
