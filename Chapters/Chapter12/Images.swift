import Foundation

/// Decoded pixels: a full-size picture, or the thumbnail made from it.
///
/// It is a class on purpose: a bitmap is large, and whoever holds one keeps its pixels in memory.
public final class Bitmap: Sendable {
    /// What the picture shows, such as `beach.jpg`; a thumbnail keeps its picture's name.
    public let name: String
    /// Its width in pixels.
    public let width: Int
    /// Its height in pixels.
    public let height: Int

    /// Creates a bitmap of `name`, `width` by `height` pixels.
    public init(name: String, width: Int, height: Int) {
        self.name = name
        self.width = width
        self.height = height
    }
}

/// The first stage: downloads the bytes of an image.
public protocol ImageFetcher: Sendable {
    /// Downloads the bytes at `url`; throws `CancellationError` once the awaiting task is cancelled.
    func fetch(_ url: URL) async throws -> Data
}

/// The second stage: turns downloaded bytes into a full-size bitmap. Slow, blocking work.
public protocol ImageDecoder: Sendable {
    /// Decodes `data`, downloaded from `url`, or throws when it is not an image.
    func decode(_ data: Data, from url: URL) throws -> Bitmap
}

/// The third stage: shrinks a full-size bitmap to the size of a row. Slow, blocking work.
public protocol ImageResizer: Sendable {
    /// Makes the thumbnail of `bitmap` that a row shows, or throws.
    func resize(_ bitmap: Bitmap) throws -> Bitmap
}

/// How many of each stage may run at the same time.
public struct StageWidths: Sendable, Equatable {
    /// Downloads at once: the server allows a few connections per app.
    public var fetches: Int
    /// Decodes at once: each holds a full-size bitmap in memory.
    public var decodes: Int
    /// Resizes at once: each keeps a processor core busy.
    public var resizes: Int

    /// Creates limits of `fetches` downloads, `decodes` decodes and `resizes` resizes at once.
    public init(fetches: Int = 4, decodes: Int = 2, resizes: Int = 2) {
        self.fetches = fetches
        self.decodes = decodes
        self.resizes = resizes
    }
}
