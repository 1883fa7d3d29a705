import Foundation
import Testing

/// What an exit test's child saw before it failed, left for the spec that ran it.
///
/// An exit test that fails returns nothing to the spec, not even the child's output, so the
/// child writes its last words to a file named after the parent process and the scenario, and
/// the spec reads them back with `explain(_:_:)`. A child that is about to do something that
/// may trap leaves its words first with `note(_:_:)`, so that a crash still explains itself.
/// Scenario names must be unique across the kata: every chapter can run in one process.
public enum LastWords {
    /// Ends scenario `name`'s child process with a failure, leaving `message` for the spec.
    public static func fail(_ name: String, _ message: String) -> Never {
        note(name, message)
        exit(EXIT_FAILURE)
    }

    /// Leaves `message` for the spec without ending the child: call it right before a step that
    /// may trap or crash, so that the spec can still say what the child was doing.
    public static func note(_ name: String, _ message: String) {
        try? Data(message.utf8).write(to: file(name, parent: getppid()))
    }

    /// Records what scenario `name`'s child process said before it failed, if it left words.
    public static func explain(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if let words = take(name) {
            Issue.record(Comment(rawValue: "What happened: " + words), sourceLocation: sourceLocation)
        }
    }

    /// Records, when the exit test failed (`result` is nil), what scenario `name`'s child said
    /// before it ended and how to read the exit status Swift Testing printed above. Pass what
    /// `#expect(processExitsWith:…)` returned.
    public static func explain(
        _ name: String, _ result: ExitTest.Result?, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let words = take(name)
        guard result == nil else { return }
        let said = words.map { "What happened: " + $0 + "\n" } ?? ""
        Issue.record(Comment(rawValue: said + statusLegend), sourceLocation: sourceLocation)
    }

    /// Records, when the exit test failed (`result` is nil), how to read the exit status Swift
    /// Testing printed above: for a scenario whose child leaves no words.
    public static func explain(_ result: ExitTest.Result?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard result == nil else { return }
        Issue.record(Comment(rawValue: statusLegend), sourceLocation: sourceLocation)
    }

    /// How to read the `→` status Swift Testing prints for a failed exit test.
    public static let statusLegend = """
        How the child process ended (the status after → above): .exitCode(1), the scenario \
        saw something wrong and said what; .exitCode(66), ThreadSanitizer reported a data race \
        in it (its report is in the test log); .signal(4) or .signal(5), a trap: a fatalError \
        or precondition, a force-unwrapped nil, an overflow, a continuation resumed twice, an \
        operation started twice or while not ready; .signal(11), a memory fault: most often a \
        stack overflow (something that calls itself without end) or an object used after it \
        was freed; .signal(6), an abort: on macOS, an exception Foundation raised.
        """

    /// Forgets words left by an earlier run of scenario `name`; call it before the exit test.
    public static func forget(_ name: String) {
        try? FileManager.default.removeItem(at: file(name, parent: getpid()))
    }

    private static func take(_ name: String) -> String? {
        let file = file(name, parent: getpid())
        guard let words = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        try? FileManager.default.removeItem(at: file)
        return words
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
