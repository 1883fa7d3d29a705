import Foundation

/// An image rendered for export: its name and the size of the file it became.
public struct Export: Sendable, Equatable {
    public let name: String
    public let bytes: Int

    public init(name: String, bytes: Int) {
        self.name = name
        self.bytes = bytes
    }
}

/// The engine's renderer: slow, synchronous work that turns an image into a file.
public protocol Renderer: Sendable {
    /// Renders the image called `name` and returns the size of the file, or throws.
    func render(_ name: String) throws -> Int
}

/// Why an export failed.
public enum ExportError: Error, Equatable {
    /// The image could not be read.
    case unreadable(String)
}
