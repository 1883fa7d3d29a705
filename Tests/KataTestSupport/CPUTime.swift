#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Processor time used by the calling thread, for specs that check that a wait does not spin.
///
/// It reads the thread's own CPU clock (`CLOCK_THREAD_CPUTIME_ID`, on Linux and Darwin alike),
/// so other threads and other tests running at the same time do not count.
public enum CPUTime {
    /// The processor time the calling thread has used since it began.
    public static var currentThread: Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
    }

    /// Runs `body` on the calling thread and reports the processor and wall-clock time it took.
    public static func measure(_ body: () throws -> Void) rethrows -> (
        cpu: Duration, wall: Duration
    ) {
        let clock = ContinuousClock()
        let cpuBefore = currentThread
        let wallBefore = clock.now
        try body()
        return (currentThread - cpuBefore, clock.now - wallBefore)
    }
}
