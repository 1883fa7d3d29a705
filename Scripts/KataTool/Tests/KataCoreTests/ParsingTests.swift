import Foundation
import Testing

@testable import KataCore

/// The recorded inputs in `Scripts/fixtures`, which the shell scripts' own tests read as well.
private func fixture(_ name: String) throws -> String {
    let folder = URL(filePath: #filePath).deletingLastPathComponent()
        .appending(path: "../../../fixtures").standardized
    return try String(contentsOf: folder.appending(path: name), encoding: .utf8)
}

@Suite("Reading the curriculum's files")
struct ParsingTests {
    @Test("a spec's claims and path classes come from the lines right above its @Test, its title from @Test")
    func specsAndTheirClaims() throws {
        let specs = SpecFile.specs(in: try fixture("SampleSpecs.swift"), file: "SampleSpecs")
        #expect(
            specs == [
                Spec(
                    name: "totalIsShown", title: "the total is shown on the main queue", claims: ["C1", "C3"],
                    file: "SampleSpecs"),
                Spec(
                    name: "eachInput", title: "every input size ends on the right total", claims: ["C2"],
                    file: "SampleSpecs", paths: ["values", "memory"]),
                Spec(name: "uncovered", title: "a spec nobody covered", claims: [], file: "SampleSpecs"),
            ])
    }

    @Test("hints are read per spec and level, with continuation lines joined")
    func hintsByLevel() throws {
        let hints = Hints(try fixture("SampleHints.md"))
        #expect(hints.specs == ["totalIsShown", "eachInput"])
        #expect(hints.levels["totalIsShown"]?[2] == "Which queue owns the label?")
        #expect(hints.levels["totalIsShown"]?[3] == "Hop to the main queue before writing.")
        #expect(hints.levels["eachInput"]?[3] == "All of them.")
    }

    @Test("the manifest lists chapters with their checks; comments and '-' are not checks")
    func manifest() {
        let chapters = Manifest.chapters(
            in: "# chapter\ttitle\tchecks\n1\tThe adder\ttsan\n2\tInvocation\t-\n12\tCapstone\tno-steps,tsan\n")
        #expect(
            chapters == [
                Chapter(number: 1, title: "The adder", checks: ["tsan"]),
                Chapter(number: 2, title: "Invocation"),
                Chapter(number: 12, title: "Capstone", checks: ["no-steps", "tsan"]),
            ])
    }

    @Test("a lesson's claims lose their sources, nested parentheses included, and keep their continuation lines")
    func lessonClaims() {
        let lesson = Lesson(
            """
            # Chapter 9: Waiting
            ## The pattern
            Mentions C99 outside Claims.
            ## Claims
            - C62: From inside an operation, never wait for work of its own queue. (000, "Waiting
              for Operations (and more)"; rests on C53)
            - C63: The main queue never waits.
            - Earlier claims these rest on: C1 (Chapter 1).
            """)
        #expect(lesson.sections == ["The pattern", "Claims"])
        #expect(lesson.claims["C62"] == "From inside an operation, never wait for work of its own queue.")
        #expect(lesson.claims["C63"] == "The main queue never waits.")
        #expect(lesson.claimIDs == ["C62", "C63", "C53", "C1"])
    }

    @Test("claim ids are whole words, each once, in order")
    func claimIDs() {
        #expect(ClaimIDs.all(in: "Covers: C17, C3 (and C17 again); not ABC12 or C12x") == ["C17", "C3"])
        #expect(ClaimIDs.sorted(["C10", "C9", "C100"]) == ["C9", "C10", "C100"])
    }
}
