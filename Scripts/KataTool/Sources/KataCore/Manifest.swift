/// One chapter of the kata, as `Chapters/chapters.tsv` lists it.
public struct Chapter: Equatable, Sendable {
    /// The chapter's number: its folders are `ChapterN`.
    public var number: Int
    /// The chapter's title, as its lesson's first line repeats it.
    public var title: String
    /// Extra checks, such as `tsan` (a race chapter) or `no-steps` (a lesson of requirements only).
    public var checks: Set<String>

    public init(number: Int, title: String, checks: Set<String> = []) {
        self.number = number
        self.title = title
        self.checks = checks
    }
}

/// The chapter manifest: the one list of chapters.
public enum Manifest {
    /// The chapters in `text` (tab-separated: number, title, comma-separated checks), in order.
    ///
    /// Lines starting with `#` and lines with fewer than two fields are not chapters.
    public static func chapters(in text: String) -> [Chapter] {
        text.split(separator: "\n", omittingEmptySubsequences: true).compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 2, let number = Int(fields[0]) else { return nil }
            let checks =
                fields.count > 2
                ? Set(fields[2].split(separator: ",").map(String.init).filter { $0 != "-" && !$0.isEmpty })
                : []
            return Chapter(number: number, title: fields[1], checks: checks)
        }
    }
}
