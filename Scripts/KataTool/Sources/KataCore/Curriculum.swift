import Foundation

/// The kata's curriculum as its files state it: the manifest and, for each chapter, its lesson,
/// its specs and its hints. It reads text only; it never builds a chapter.
public struct Curriculum: Sendable {
    /// The chapters, in the manifest's order.
    public var chapters: [Chapter]
    private var root: URL

    /// Reads the manifest of the kata whose root folder is `root`.
    public init(root: URL) throws {
        self.root = root
        chapters = Manifest.chapters(
            in: try String(contentsOf: root.appending(path: "Chapters/chapters.tsv"), encoding: .utf8))
    }

    /// Chapter `n`'s lesson.
    public func lesson(_ n: Int) throws -> Lesson {
        Lesson(try String(contentsOf: root.appending(path: "Chapters/Chapter\(n)/README.md"), encoding: .utf8))
    }

    /// Chapter `n`'s hints; empty when it has no hint file.
    public func hints(_ n: Int) -> Hints {
        Hints((try? String(contentsOf: root.appending(path: "Tests/Hints/Chapter\(n).md"), encoding: .utf8)) ?? "")
    }

    /// Chapter `n`'s specs, file by file in the order of their names, each file's in source order.
    public func specs(_ n: Int) throws -> [Spec] {
        try swiftFiles(in: "Tests/Chapter\(n)Tests").flatMap { url in
            SpecFile.specs(
                in: try String(contentsOf: url, encoding: .utf8), file: url.deletingPathExtension().lastPathComponent)
        }
    }

    /// The names of the Swift files in the folder at `path`, sorted.
    public func swiftFileNames(in path: String) throws -> [String] {
        try swiftFiles(in: path).map(\.lastPathComponent)
    }

    /// The text of every Swift file in chapter `n`'s spec folder, joined.
    public func specSources(_ n: Int) throws -> String {
        try swiftFiles(in: "Tests/Chapter\(n)Tests").map { try String(contentsOf: $0, encoding: .utf8) }
            .joined(separator: "\n")
    }

    private func swiftFiles(in path: String) throws -> [URL] {
        let folder = root.appending(path: path)
        return try FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))
            .filter { $0.hasSuffix(".swift") }
            .sorted()
            .map { folder.appending(path: $0) }
    }
}
