import Foundation
import KataCore

// kata-tool: the curriculum checks of Scripts/verify and the writer of Tests/PATHS.md.
//
//   kata-tool paths [--check]   writes Tests/PATHS.md, or with --check only compares
//   kata-tool lint [N ...]      checks claims, hints, cited sections and each lesson's skeleton
//   kata-tool verdicts FILE [--json]
//                               each spec's verdict in a Swift Testing xunit report
//
// It runs from the kata's root folder (or with KATA_ROOT naming it).

let arguments = Array(CommandLine.arguments.dropFirst())
let root = URL(filePath: ProcessInfo.processInfo.environment["KATA_ROOT"] ?? FileManager.default.currentDirectoryPath)

func usage() -> Never {
    FileHandle.standardError.write(
        Data("usage: kata-tool paths [--check] | kata-tool lint [N ...] | kata-tool verdicts FILE [--json]\n".utf8))
    exit(2)
}

if arguments.first == "verdicts" {
    guard arguments.count == 2 || (arguments.count == 3 && arguments[2] == "--json") else { usage() }
    guard let data = FileManager.default.contents(atPath: arguments[1]), let results = Report.results(in: data) else {
        FileHandle.standardError.write(Data("kata-tool: \(arguments[1]) is no Swift Testing report\n".utf8))
        exit(1)
    }
    if arguments.count == 3 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(results) + Data("\n".utf8))
    } else {
        print(Report.lines(results), terminator: "")
    }
    exit(0)
}

do {
    let curriculum = try Curriculum(root: root)
    switch arguments.first {
    case "paths":
        let check = arguments.dropFirst() == ["--check"]
        guard check || arguments.count == 1 else { usage() }
        let document = PathsDocument.render(
            try curriculum.chapters.map { ($0, try curriculum.lesson($0.number), try curriculum.specs($0.number)) })
        let path = root.appending(path: "Tests/PATHS.md")
        if check {
            guard (try? String(contentsOf: path, encoding: .utf8)) == document else {
                FileHandle.standardError.write(
                    Data("Tests/PATHS.md is out of date with the specs: run Scripts/claim-paths\n".utf8))
                exit(1)
            }
        } else {
            try document.write(to: path, atomically: true, encoding: .utf8)
            print("wrote Tests/PATHS.md")
        }
    case "lint":
        let wanted = arguments.dropFirst().map { Int($0) ?? { usage() }() }
        var failed = false
        for chapter in curriculum.chapters where wanted.isEmpty || wanted.contains(chapter.number) {
            let problems = Checks.problems(
                of: chapter, lesson: try curriculum.lesson(chapter.number), specs: try curriculum.specs(chapter.number),
                hints: curriculum.hints(chapter.number), specSources: try curriculum.specSources(chapter.number),
                starterFiles: try curriculum.swiftFileNames(in: "Chapters/Chapter\(chapter.number)"),
                solutionFiles: try curriculum.swiftFileNames(in: "Solutions/Chapter\(chapter.number)"))
            for problem in problems { print("✘ \(problem)") }
            failed = failed || !problems.isEmpty
        }
        exit(failed ? 1 : 0)
    default:
        usage()
    }
} catch {
    FileHandle.standardError.write(Data("kata-tool: \(error)\n".utf8))
    exit(2)
}
