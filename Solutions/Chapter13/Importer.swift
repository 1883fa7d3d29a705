import Foundation
import Synchronization

/// Imports photos from a camera card with Swift concurrency: at most `width` copies at once,
/// progress on the main actor, and a cancel that stops what has not started and reaches what has.
///
/// The same job as Chapter 7's `PhotoImporter`, without an operation queue.
public final class Importer: Sendable {
    private let card: any PhotoCard
    /// The importer's width, shared by every import: a copy waits here, suspended, for a slot.
    private let slots: Slots
    /// Each import under way, so that `cancelAll()` can reach it; a `Mutex`, since it is only
    /// touched for a moment and never across an `await`.
    private let imports = Mutex<[UUID: (task: Task<[Photo], any Error>, stopped: Stopped)]>([:])

    /// Creates an importer that copies from `card`, at most `width` photos at once.
    public init(card: any PhotoCard, width: Int) {
        self.card = card
        slots = Slots(max(1, width))
    }

    /// Imports `names`, in that order, and returns their photos in the same order.
    ///
    /// Calls `progress(copied, total)` on the main actor each time a photo has been copied.
    /// Throws the first error a copy throws, or `CancellationError` once the calling task is
    /// cancelled or `cancelAll()` is called: copies that have not started then never start, and
    /// those under way are cancelled.
    public func importAll(
        _ names: [String], progress: @escaping @MainActor @Sendable (Int, Int) -> Void
    ) async throws -> [Photo] {
        try Task.checkCancellation()  // a caller cancelled before asking copies nothing
        let id = UUID()
        let stopped = Stopped()
        // An unstructured task, so that cancelAll() has something to cancel. It inherits the
        // caller's priority but not its cancellation: the handler below passes that on. It is
        // made and recorded under one lock: its first copy can begin at once, and a cancelAll()
        // that comes after that must find it.
        let task = imports.withLock { imports in
            let task = Task { [card, slots] in
                try await Self.copy(names, from: card, slots: slots, stopped: stopped, progress: progress)
            }
            imports[id] = (task, stopped)
            return task
        }
        defer { _ = imports.withLock { $0.removeValue(forKey: id) } }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Cancels every import under way; each then throws `CancellationError`.
    public func cancelAll() {
        // Every import is marked stopped before any is cancelled: a slot that a cancelled copy
        // gives back may go to another import's copy, which must not start either.
        let running = imports.withLock { imports in
            imports.values.forEach { $0.stopped.set() }
            return imports.values.map(\.task)
        }
        running.forEach { $0.cancel() }
    }

    /// Copies every photo in a child task of its own, each waiting for a slot first.
    private static func copy(
        _ names: [String], from card: any PhotoCard, slots: Slots, stopped: Stopped,
        progress: @escaping @MainActor @Sendable (Int, Int) -> Void
    ) async throws -> [Photo] {
        try await withThrowingTaskGroup(of: (Int, Photo?).self) { group in
            for (index, name) in names.enumerated() {
                group.addTask {
                    try await slots.take()
                    // A slot handed over after a cancel or a failure copies nothing. The child
                    // returns no photo instead of an error, so that the error that stopped the
                    // import is the one the loop below reports.
                    guard !Task.isCancelled, !stopped.isSet else {
                        await slots.giveBack()
                        return (index, nil)
                    }
                    do {
                        let photo = try await card.copy(name)
                        await slots.giveBack()
                        return (index, photo)
                    } catch {
                        // Marked before the slot goes to the next copy, which the group has not
                        // cancelled yet: it is cancelled only once this error reaches the loop.
                        if !(error is CancellationError) { stopped.set() }
                        await slots.giveBack()
                        throw error
                    }
                }
            }
            // The first error ends the loop; the group then cancels the children still running.
            var photos = [Photo?](repeating: nil, count: names.count)
            var copied = 0
            for try await (index, photo) in group {
                guard let photo else { continue }
                photos[index] = photo
                copied += 1
                await progress(copied, names.count)
            }
            try Task.checkCancellation()
            guard !stopped.isSet else { throw CancellationError() }
            return photos.map { $0! }
        }
    }
}

/// Whether one import has stopped, failed or cancelled by `cancelAll()`, so that no other copy
/// of it starts.
private final class Stopped: Sendable {
    private let flag = Atomic(false)

    var isSet: Bool { flag.load(ordering: .acquiring) }

    func set() { flag.store(true, ordering: .releasing) }
}

/// A fixed number of slots that copies take and give back; a copy that finds none suspends,
/// without a thread, until one is given back or its task is cancelled.
private actor Slots {
    private var free: Int
    private var waiting: [(id: UUID, turn: CheckedContinuation<Void, any Error>)] = []

    init(_ count: Int) {
        free = count
    }

    /// Takes a slot, waiting for one if none is free; throws `CancellationError` if the task is
    /// cancelled first.
    func take() async throws {
        try Task.checkCancellation()
        // Checked and taken with no `await` in between: no other call can slip in (reentrancy).
        if free > 0 {
            free -= 1
            return
        }
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { waiting.append((id, $0)) }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    /// Gives a slot back: straight to the copy that has waited longest, if any.
    func giveBack() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().turn.resume()
        }
    }

    private func stopWaiting(_ id: UUID) {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        waiting.remove(at: index).turn.resume(throwing: CancellationError())
    }
}
