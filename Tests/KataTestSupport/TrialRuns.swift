import Foundation
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// Trials of learner code in a process of their own, each run once per test run and shared by
/// every spec that needs it.
///
/// Code that traps (a `Mutex` locked again while announcing, a second `start()` that reaches the
/// inherited one) or blocks a thread for good (an `NSLock` locked again) would stop or hang every
/// spec of the run. A spec first asks for the trial of the paths it takes; the trial runs the
/// scenario in an exit test, and when it fails, the first spec to ask reports how and the others
/// that they did not run, while specs on other paths still run. A chapter's trait (`.preflight`)
/// usually asks, so that a spec's body stays about its claim.
public enum TrialRuns {
    private static let runs = Protected<[String: Task<Bool, Never>]>([:])

    /// Whether trial `name` survived; runs it, through `run`, the first time any spec asks.
    ///
    /// - Parameters:
    ///   - name: The trial's name, unique in the kata (every chapter can run in one process).
    ///   - what: What went wrong when it failed, for the specs that did not run: "finishing an
    ///     operation again trapped or hung".
    ///   - see: Where to read, as `Lesson.see(_:)` writes it.
    ///   - run: Runs the exit test and records its own issue when it fails; returns whether the
    ///     child process survived.
    public static func survives(
        _ name: String, what: String, see: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ run: @escaping @Sendable () async -> Bool
    ) async -> Bool {
        // Under ThreadSanitizer a race in the trial process would end it, and the report would not
        // reach this process's log: there the specs run the code directly.
        guard !underThreadSanitizer else { return true }
        let (task, isFirst) = runs.withValue { runs -> (Task<Bool, Never>, Bool) in
            if let trial = runs[name] { return (trial, false) }
            let task = Task { await run() }
            runs[name] = task
            return (task, true)
        }
        let survived = await task.value
        if !survived && !isFirst {
            Issue.record(
                """
                This spec did not run: in a trial run of its own, \(what) (another spec of this run \
                reports how). \(see)
                """, sourceLocation: sourceLocation)
        }
        return survived
    }

    /// Whether ThreadSanitizer watches this process (its runtime is linked in).
    public static let underThreadSanitizer: Bool = {
        #if canImport(Darwin)
            dlsym(UnsafeMutableRawPointer(bitPattern: -2), "__tsan_init") != nil  // RTLD_DEFAULT
        #else
            dlsym(nil, "__tsan_init") != nil  // RTLD_DEFAULT
        #endif
    }()
}
