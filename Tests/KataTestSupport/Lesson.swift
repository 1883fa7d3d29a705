/// A pointer into one chapter's lesson, for failure messages.
public struct Lesson: Sendable {
    /// The chapter whose lesson this points into.
    public let chapter: Int

    /// Creates a pointer into chapter `chapter`'s lesson.
    public init(chapter: Int) {
        self.chapter = chapter
    }

    /// Where to read more: the lesson file and the section titled `section`.
    public func see(_ section: String) -> String {
        "→ Read Chapters/Chapter\(chapter)/README.md, section “\(section)”."
    }
}
