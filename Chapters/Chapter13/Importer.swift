import Foundation
import Synchronization

/// Imports photos from a camera card with Swift concurrency: at most `width` copies at once,
/// progress on the main actor, and a cancel that stops what has not started and reaches what has.
///
/// The same job as Chapter 7's `PhotoImporter`, without an operation queue.
public final class Importer: Sendable {
    private let card: any PhotoCard
    private let width: Int
    /// The imports under way, so that `cancelAll()` can reach them.
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
        // The first port: one child task per photo, all started at once, and the results
        // collected when every one of them is done.
        let photos = try await withThrowingTaskGroup(of: (Int, Photo).self) { group in
            for (index, name) in names.enumerated() {
                group.addTask { (index, try await self.card.copy(name)) }
            }
            var photos = [Photo?](repeating: nil, count: names.count)
            for try await (index, photo) in group {
                photos[index] = photo
            }
            return photos.compactMap { $0 }
        }
        await progress(photos.count, names.count)
        return photos
    }

    /// Cancels every import under way; each then throws `CancellationError`.
    public func cancelAll() {
        let running = imports.withLock { Array($0.values) }
        running.forEach { $0.cancel() }
    }
}
