// swift-tools-version: 6.2
import PackageDescription

// The kata's own tooling, kept apart from the chapters: it reads the curriculum's files (the
// manifest, lessons, specs and hints) as text and never builds or imports a chapter.
let package = Package(
    name: "KataTool",
    platforms: [.macOS(.v15)],
    products: [.executable(name: "kata-tool", targets: ["kata-tool"])],
    targets: [
        .target(name: "KataCore"),
        .executableTarget(name: "kata-tool", dependencies: ["KataCore"]),
        .testTarget(name: "KataCoreTests", dependencies: ["KataCore"]),
    ],
    swiftLanguageModes: [.v6]
)
