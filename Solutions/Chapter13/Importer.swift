import Foundation
import Synchronization

/// Imports photos from a camera card with Swift concurrency: at most `width` copies at once,
/// progress on the main actor, and a cancel that stops what has not started and reaches what has.
///
/// The same job as Chapter 7's `PhotoImporter`, without an operation queue.
public final class Importer: Sendable {
    private let card: any PhotoCard
    private let width: Int
    /// The task of each import under way, so that `cancelAll()` can reach it; a `Mutex`, since
    /// it is only touched for a moment and never across an `await`.
    private let imports = Mutex<[UUID: Task<[Photo], any Error>]>([:])

    /// Creates an importer that copies from `card`, at most `width` photos at once.
    public init(card: any PhotoCard, width: Int) {
        self.card = card
        self.width = max(1, width)
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
        // An unstructured task, so that cancelAll() has something to cancel; it inherits the
        // caller's priority, and the handler below passes the caller's cancellation on to it.
        let task = Task { [card, width] in
            try await Self.copy(names, from: card, width: width, progress: progress)
        }
        imports.withLock { $0[id] = task }
        defer { _ = imports.withLock { $0.removeValue(forKey: id) } }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Cancels every import under way; each then throws `CancellationError`.
    public func cancelAll() {
        let running = imports.withLock { Array($0.values) }
        running.forEach { $0.cancel() }
    }

    /// Copies `names` with at most `width` child tasks at a time, starting the next as one ends.
    private static func copy(
        _ names: [String], from card: any PhotoCard, width: Int,
        progress: @escaping @MainActor @Sendable (Int, Int) -> Void
    ) async throws -> [Photo] {
        try await withThrowingTaskGroup(of: (Int, Photo).self) { group in
            var photos = [Photo?](repeating: nil, count: names.count)
            var next = 0
            var copied = 0
            // A group runs every child it is given at once: the width is the number of children
            // it holds, and a new child joins only when one has returned.
            func startNext() -> Bool {
                guard next < names.count else { return false }
                let index = next
                next += 1
                // Once the import is cancelled, no new copy starts.
                return group.addTaskUnlessCancelled { (index, try await card.copy(names[index])) }
            }
            for _ in 0..<width where !startNext() { break }
            while let (index, photo) = try await group.next() {
                photos[index] = photo
                copied += 1
                await progress(copied, names.count)
                _ = startNext()
            }
            try Task.checkCancellation()  // cancelled before the last copies were started
            return photos.map { $0! }
        }
    }
}
