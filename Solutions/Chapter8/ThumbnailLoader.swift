/// A picture fetched at full size.
public struct Picture: Sendable, Equatable {
    /// The name the picture was fetched by.
    public let name: String
    /// Its width in pixels.
    public let width: Int

    /// Creates a picture called `name`, `width` pixels wide.
    public init(name: String, width: Int) {
        self.name = name
        self.width = width
    }
}

/// A small copy of a picture.
public struct Thumbnail: Sendable, Equatable {
    /// The name of the picture it was made from.
    public let name: String
    /// Its width in pixels.
    public let width: Int

    /// Creates a thumbnail of the picture `name`, `width` pixels wide.
    public init(name: String, width: Int) {
        self.name = name
        self.width = width
    }
}

/// A service that fetches pictures and shrinks them, both asynchronously.
///
/// Either step may throw, and either may be cancelled: a loader stops with `CancellationError`
/// when the task awaiting it is cancelled.
public protocol ThumbnailLoader: Sendable {
    /// Fetches the full-size picture called `name`.
    func fetch(_ name: String) async throws -> Picture

    /// Shrinks `picture` to `width` pixels.
    func resize(_ picture: Picture, to width: Int) async throws -> Thumbnail
}
