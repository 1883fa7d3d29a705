import Foundation
import KataTestSupport

/// Where this chapter's failure messages send the learner.
let lesson = Lesson(chapter: 4)

/// A non-concurrent operation that counts how often it is started and run, and on which thread.
///
/// Started while it is not ready, it does nothing instead of trapping: the exit tests show the
/// trap, and the other specs can then report the mistake and go on.
final class ProbeOperation: Operation, @unchecked Sendable {  // its state lives in Protected boxes
    private let work: @Sendable () -> Void
    private let onStart: @Sendable (Int) -> Void
    private let starts = Protected(0)
    private let runs = Protected(0)
    private let workThread = Protected<ObjectIdentifier?>(nil)

    /// Creates a probe that runs `work` in `main` and calls `onStart` with the count of each start.
    init(
        onStart: @escaping @Sendable (Int) -> Void = { _ in },
        work: @escaping @Sendable () -> Void = {}
    ) {
        self.onStart = onStart
        self.work = work
    }

    /// How many times `start()` was called.
    var startCount: Int { starts.value }

    /// How many times the work ran.
    var runCount: Int { runs.value }

    /// The thread the work ran on, if it ran.
    var ranOn: ObjectIdentifier? { workThread.value }

    override func start() {
        let count = starts.withValue { count in
            count += 1
            return count
        }
        onStart(count)
        // Foundation would stop the whole test process here; refuse, so that the spec reports it.
        if !isReady && !isCancelled { return }
        super.start()
    }

    override func main() {
        runs.withValue { $0 += 1 }
        workThread.withValue { $0 = ObjectIdentifier(Thread.current) }
        work()
    }
}

/// The identity of the calling thread, comparable with `ProbeOperation.ranOn`.
func currentThreadIdentity() -> ObjectIdentifier {
    ObjectIdentifier(Thread.current)
}
