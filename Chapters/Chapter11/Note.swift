import Foundation

/// A note the user wrote, waiting to be saved into the store.
public struct Note: Sendable, Hashable, CustomStringConvertible {
    /// The note's title, which also names it in messages.
    public let title: String
    /// What the note says.
    public let text: String

    /// Creates a note called `title`.
    public init(_ title: String, text: String = "") {
        self.title = title
        self.text = text
    }

    public var description: String { title }
}

/// The app's local database of notes, touched only on its own serial dispatch queue.
public protocol NoteStore: AnyObject, Sendable {
    /// The serial dispatch queue that every call into the store must run on.
    var queue: DispatchQueue { get }

    /// Saves `note`; call it only on `queue`.
    func save(_ note: Note)
}
