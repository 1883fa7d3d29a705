/// A photo copied from the camera card.
public struct Photo: Sendable, Equatable, CustomStringConvertible {
    /// The photo's file name on the card, such as `IMG_0001.HEIC`.
    public let name: String

    /// Creates the photo called `name`.
    public init(name: String) {
        self.name = name
    }

    public var description: String { name }
}

/// Where the photos come from: a camera card that copies one photo at a time per request.
public protocol PhotoCard: Sendable {
    /// Copies the photo called `name`, suspending while the card reads it.
    ///
    /// Throws `CancellationError` as soon as the task that awaits it is cancelled, or the card's
    /// own error when the photo cannot be read.
    func copy(_ name: String) async throws -> Photo
}
