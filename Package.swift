// swift-tools-version: 6.2
import PackageDescription

// Every chapter's code builds from its starter (`Chapters/ChapterN`) by default, from the
// reference (`Solutions/ChapterN`) when KATA_SOLUTIONS=1, and from any folder inside the
// package when KATA_CHAPTERN_SOURCES names one (the scripts use this for mutants, controls and
// pristine starters). KATA_CHAPTER=3 (or 3,5) builds only those chapters, so that a chapter
// that does not compile cannot stop another chapter's specs; a chapter being written is built
// only when named this way, until it joins the list below.
let environment = Context.environment
let allChapters = 1...13
let chapters =
    environment["KATA_CHAPTER"].map { list in
        list.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
    } ?? Array(allChapters)
let useSolutions = environment["KATA_SOLUTIONS"] == "1"

// Chapters
var targets: [Target] = chapters.map { number in
    .target(
        name: "Chapter\(number)",
        path: environment["KATA_CHAPTER\(number)_SOURCES"]
            ?? "\(useSolutions ? "Solutions" : "Chapters")/Chapter\(number)",
        exclude: ["README.md"]
    )
}

// Tests
targets.append(.target(name: "KataTestSupport", path: "Tests/KataTestSupport"))
targets += chapters.map { number in
    .testTarget(
        name: "Chapter\(number)Tests",
        dependencies: [.target(name: "Chapter\(number)"), "KataTestSupport"],
        path: "Tests/Chapter\(number)Tests"
    )
}

// Shared settings
for target in targets {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .swiftLanguageMode(.v6)
        ]
}

let package = Package(
    name: "OperationKata",
    platforms: [.macOS(.v15)],
    targets: targets,
    swiftLanguageModes: [.v6]
)
