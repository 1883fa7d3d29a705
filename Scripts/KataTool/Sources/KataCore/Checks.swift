/// What a check of the curriculum found wrong, with the chapter it concerns.
public struct Problem: Equatable, Sendable, CustomStringConvertible {
    public var chapter: Int
    /// What is wrong, in words a maintainer acts on.
    public var message: String

    public init(chapter: Int, message: String) {
        self.chapter = chapter
        self.message = message
    }

    public var description: String { "chapter \(chapter): \(message)" }
}

/// The static checks of a chapter: claims, hints, lesson sections and the lesson's skeleton.
public enum Checks {
    /// The sections every lesson has, in this order, with `Claims` last; its own go between them.
    public static func skeleton(for chapter: Chapter) -> [String] {
        chapter.checks.contains("no-steps")
            ? ["The pattern", "Why it matters", "Linux and macOS", "What you now know", "Claims"]
            : ["The pattern", "Why it matters", "Steps", "Linux and macOS", "What you now know", "Claims"]
    }

    /// Every problem of `chapter` that its lesson, specs and hints show.
    ///
    /// - Parameters:
    ///   - specSources: The text of the chapter's spec files, for the lesson sections they cite.
    ///   - starterFiles: The Swift files of the starter; `solutionFiles`, of the reference.
    public static func problems(
        of chapter: Chapter, lesson: Lesson, specs: [Spec], hints: Hints, specSources: String,
        starterFiles: [String], solutionFiles: [String]
    ) -> [Problem] {
        var problems: [String] = []
        let uncovered = specs.filter(\.claims.isEmpty).map(\.name)
        if !uncovered.isEmpty { problems.append("no // Covers: line above \(uncovered.joined(separator: " "))") }
        let undefined = ClaimIDs.sorted(Set(specs.flatMap(\.claims)).subtracting(lesson.claimIDs))
        if !undefined.isEmpty {
            problems.append("\(undefined.joined(separator: " ")) missing from the lesson's ## Claims")
        }
        let classes = Set(PathClass.allCases.map(\.rawValue))
        let unknown = specs.filter { !Set($0.paths).isSubset(of: classes) }.map(\.name)
        if !unknown.isEmpty {
            problems.append(
                "a // Paths: line names a class other than \(PathClass.allCases.map(\.rawValue).joined(separator: ", ")): \(unknown.joined(separator: " "))"
            )
        }
        let cited = citedSections(in: specSources).filter { !lesson.sections.contains($0) }
        if !cited.isEmpty {
            problems.append(
                "failure messages cite no such lesson section: \(cited.map { "“\($0)”" }.joined(separator: " "))")
        }
        let withoutHints = specs.map(\.name).filter { hints.levels[$0]?[2] == nil || hints.levels[$0]?[3] == nil }
        if !withoutHints.isEmpty {
            problems.append(
                "no hints 2 and 3 in Tests/Hints/Chapter\(chapter.number).md for \(withoutHints.joined(separator: " "))"
            )
        }
        let orphans = hints.specs.filter { name in !specs.contains { $0.name == name } }
        if !orphans.isEmpty {
            problems.append(
                "Tests/Hints/Chapter\(chapter.number).md has hints for no spec named \(orphans.joined(separator: " "))")
        }
        if starterFiles != solutionFiles {
            problems.append(
                "starter and solution differ in files: starter \(starterFiles.joined(separator: " ")); solution \(solutionFiles.joined(separator: " "))"
            )
        }
        let expected = skeleton(for: chapter)
        if lesson.sections.filter(expected.contains) != expected || lesson.sections.last != "Claims" {
            problems.append(
                "the lesson's skeleton is \(expected.joined(separator: ", ")) in this order, Claims last; it has \(lesson.sections.joined(separator: ", "))"
            )
        }
        return problems.map { Problem(chapter: chapter.number, message: $0) }
    }

    /// The lesson sections that `see("…")` calls in `source` cite, each once, in order.
    static func citedSections(in source: String) -> [String] {
        var found: [String] = []
        var rest = source[...]
        while let range = rest.range(of: "see(\"") {
            let after = rest[range.upperBound...]
            guard let close = after.range(of: "\")") else { break }
            let title = String(after[..<close.lowerBound])
            if !title.contains("\""), !found.contains(title) { found.append(title) }
            rest = after[close.upperBound...]
        }
        return found
    }
}
