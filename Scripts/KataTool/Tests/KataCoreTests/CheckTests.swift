import Testing

@testable import KataCore

@Suite("The curriculum checks")
struct CheckTests {
    private let chapter = Chapter(number: 99, title: "Sample")
    private let lesson = Lesson(
        """
        ## The pattern
        ## Why it matters
        ## Cancelling
        ## Steps
        ## Linux and macOS
        ## What you now know
        ## Claims
        - C1: One. (000)
        - C2: Two. (000)
        """)
    private let specs = [
        Spec(name: "one", title: "first", claims: ["C1"], file: "OneSpecs"),
        Spec(name: "two", title: "second", claims: ["C2"], file: "TwoSpecs"),
    ]
    private let hints = Hints("## one\n2. a\n3. b\n\n## two\n2. c\n3. d\n")

    private func problems(
        lesson: Lesson? = nil, specs: [Spec]? = nil, hints: Hints? = nil, source: String = #"see("Cancelling")"#,
        starter: [String] = ["A.swift"], checks: Set<String> = []
    ) -> [String] {
        var chapter = chapter
        chapter.checks = checks
        return Checks.problems(
            of: chapter, lesson: lesson ?? self.lesson, specs: specs ?? self.specs, hints: hints ?? self.hints,
            specSources: source, starterFiles: starter, solutionFiles: ["A.swift"]
        ).map(\.message)
    }

    @Test("a sound chapter has no problems")
    func soundChapter() {
        #expect(problems().isEmpty)
    }

    @Test("a spec without Covers, or covering a claim the lesson never names, is a problem")
    func claims() {
        let found = problems(
            specs: specs + [Spec(name: "three", title: "third", claims: [], file: "X")] + [
                Spec(name: "four", title: "fourth", claims: ["C7"], file: "X")
            ])
        #expect(found.contains("no // Covers: line above three"))
        #expect(found.contains("C7 missing from the lesson's ## Claims"))
    }

    @Test("missing hints, hints for no spec and citations of missing sections are problems")
    func hintsAndCitations() {
        let found = problems(hints: Hints("## one\n2. a\n3. b\n\n## gone\n2. x\n3. y\n"), source: #"see("Nowhere")"#)
        #expect(found.contains("no hints 2 and 3 in Tests/Hints/Chapter99.md for two"))
        #expect(found.contains("Tests/Hints/Chapter99.md has hints for no spec named gone"))
        #expect(found.contains("failure messages cite no such lesson section: “Nowhere”"))
    }

    @Test("a starter whose files differ from the solution's is a problem")
    func parallelFiles() {
        #expect(problems(starter: ["A.swift", "B.swift"]).count == 1)
    }

    @Test("the skeleton: Steps required unless no-steps, the order kept, Claims last")
    func skeleton() {
        let swapped = Lesson(
            "## The pattern\n## Why it matters\n## Steps\n## Linux and macOS\n## Claims\n- C1: x\n- C2: y\n## What you now know\n"
        )
        #expect(problems(lesson: swapped, source: "").count == 1)
        let withoutSteps = Lesson(
            "## The pattern\n## Why it matters\n## Linux and macOS\n## What you now know\n## Claims\n- C1: x\n- C2: y\n"
        )
        #expect(problems(lesson: withoutSteps, source: "").count == 1)
        #expect(problems(lesson: withoutSteps, source: "", checks: ["no-steps"]).isEmpty)
    }

    @Test("the paths document lists each claim's specs, by claim number")
    func pathsDocument() {
        let text = PathsDocument.render([(chapter, lesson, specs.reversed())])
        #expect(
            text.hasSuffix(
                "\n## Chapter 99: Sample\n\n- **C1** One.\n  - first (OneSpecs)\n"
                    + "  - path classes walked: none named; not yet: memory, reuse, values, interference, collaborators\n"
                    + "\n- **C2** Two.\n  - second (TwoSpecs)\n"
                    + "  - path classes walked: none named; not yet: memory, reuse, values, interference, collaborators\n"
            ))
    }
}
