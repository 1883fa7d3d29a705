import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Scheduling levers that make a window between two lines of an export's code open on every run.
///
/// Linux only: pinned to one processor, a thread in the idle scheduling class gives way at once
/// to any other thread of the process that wakes there (the kernel's fair scheduler preempts an
/// idle-class task when a normal one wakes), so the work `addOperation` wakes a queue thread
/// for runs to its end before the calling thread reaches its next line. Elsewhere both levers
/// report that they are unavailable and the scenario runs without them.
enum LastToRun {
    /// Pins every thread of this process to the first processor it may use; threads made later
    /// inherit it. Returns false where that is unavailable.
    static func pinProcessToOneProcessor() -> Bool {
        #if os(Linux)
            // glibc declares these only with _GNU_SOURCE, which Swift's Glibc module does not set.
            typealias Affinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
            guard let getter = dlsym(nil, "sched_getaffinity"),
                let setter = dlsym(nil, "sched_setaffinity")
            else { return false }
            let getAffinity = unsafeBitCast(getter, to: Affinity.self)
            let setAffinity = unsafeBitCast(setter, to: Affinity.self)
            var allowed = cpu_set_t()
            let size = MemoryLayout<cpu_set_t>.size
            guard getAffinity(0, size, &allowed) == 0 else { return false }
            let first = withUnsafeBytes(of: &allowed) { bytes in
                bytes.firstIndex { $0 != 0 }.map { $0 * 8 + bytes[$0].trailingZeroBitCount }
            }
            guard let processor = first else { return false }
            var one = cpu_set_t()
            withUnsafeMutableBytes(of: &one) { $0[processor / 8] = 1 << (processor % 8) }
            // Twice: a thread made while the first pass ran may have inherited the old mask.
            for _ in 0..<2 {
                let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
                guard !threads.isEmpty else { return false }
                for thread in threads.compactMap({ Int32($0) }) where setAffinity(thread, size, &one) != 0 {
                    return false
                }
            }
            return true
        #else
            return false
        #endif
    }

    /// Puts the calling thread in the idle scheduling class. Returns false where that is unavailable.
    static func makeCallingThreadIdleClass() -> Bool {
        #if os(Linux)
            var parameters = sched_param(sched_priority: 0)
            return sched_setscheduler(0, 5 /* SCHED_IDLE */, &parameters) == 0
        #else
            return false
        #endif
    }
}
