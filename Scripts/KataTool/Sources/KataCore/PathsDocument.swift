/// `Tests/PATHS.md`: for each chapter, claim by claim, the specs that judge it.
public enum PathsDocument {
    /// The document for `chapters`, each with its lesson and its specs.
    public static func render(_ chapters: [(chapter: Chapter, lesson: Lesson, specs: [Spec])]) -> String {
        var text = """
            # Paths the specs walk, claim by claim

            Written by `Scripts/claim-paths` from each spec's `// Covers:` line and title; `Scripts/verify`
            fails while this file and the specs disagree. Each claim lists the specs that judge it; a
            spec's title names the path it walks (first call or repeated, success, error or cancel exit,
            the moment a cancel arrives, unequal parameters, memory afterwards). Under them, the path
            classes of `Tests/README.md` ("Path classes") that those specs walk, as their `// Paths:`
            lines say, and those none of them walks yet. Claims a chapter only rests on, and paths no
            spec can see on some platform, are listed in `Tests/README.md`.

            """
        for (chapter, lesson, specs) in chapters {
            text += "\n## Chapter \(chapter.number): \(chapter.title)\n"
            for claim in ClaimIDs.sorted(Set(specs.flatMap(\.claims))) {
                text += "\n- **\(claim)** \(lesson.claims[claim] ?? "")\n"
                let judging = specs.filter { $0.claims.contains(claim) }
                for spec in judging {
                    text += "  - \(spec.title) (\(spec.file))\n"
                }
                let walked = PathClass.allCases.map { path in
                    (path, judging.filter { $0.paths.contains(path.rawValue) }.count)
                }
                let done = walked.filter { $0.1 > 0 }.map { "\($0.0.rawValue) (\($0.1))" }
                let open = walked.filter { $0.1 == 0 }.map(\.0.rawValue)
                text += "  - path classes walked: \(done.isEmpty ? "none named" : done.joined(separator: ", "))"
                text += open.isEmpty ? "\n" : "; not yet: \(open.joined(separator: ", "))\n"
            }
        }
        return text
    }
}
