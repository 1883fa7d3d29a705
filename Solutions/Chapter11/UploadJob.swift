import Foundation

/// Saves one note, through the closure the engine gave it.
public final class UploadJob: Operation, @unchecked Sendable {  // every stored property is immutable
    /// The note this job saves.
    public let note: Note
    private let save: @Sendable (Note) -> Void

    /// Creates a job that saves `note` by calling `save` when it runs.
    public init(note: Note, save: @escaping @Sendable (Note) -> Void) {
        self.note = note
        self.save = save
        super.init()
        name = "upload \(note.title)"
    }

    public override func main() {
        guard !isCancelled else { return }
        save(note)
    }
}
