import Foundation
import Testing

/// What an exit test's child saw before it failed, left for the spec that ran it.
///
/// An exit test that fails returns nothing to the spec, not even the child's output, so the
/// child writes its last words to a file named after the parent process and the scenario.
/// Scenario names must be unique across the kata: every chapter can run in one process.
public enum LastWords {
    /// Ends scenario `name`'s child process with a failure, leaving `message` for the spec.
    public static func fail(_ name: String, _ message: String) -> Never {
        try? Data(message.utf8).write(to: file(name, parent: getppid()))
        exit(EXIT_FAILURE)
    }

    /// Records what scenario `name`'s child process said before it failed, if it left words.
    public static func explain(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let file = file(name, parent: getpid())
        guard let words = try? String(contentsOf: file, encoding: .utf8) else { return }
        try? FileManager.default.removeItem(at: file)
        Issue.record(Comment(rawValue: "What happened: " + words), sourceLocation: sourceLocation)
    }

    /// Forgets words left by an earlier run of scenario `name`; call it before the exit test.
    public static func forget(_ name: String) {
        try? FileManager.default.removeItem(at: file(name, parent: getpid()))
    }

    private static func file(_ name: String, parent: Int32) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kata-\(parent)-\(name).txt")
    }
}

extension Duration {
    /// The duration in seconds, for failure messages: "0.5".
    public var seconds: String {
        String(format: "%g", timeInterval)
    }
}
