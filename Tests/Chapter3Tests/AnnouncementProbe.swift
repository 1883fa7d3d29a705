import Foundation

// The Linux announcement probe.
//
// On Apple platforms a spec observes an operation's will/did change notifications with KVO. On
// Linux an operation takes no observers, so the specs recognise an announcement by its one
// visible effect: swift-corelibs-foundation's `didChangeValue(forKey:)` reads the property back,
// from one place in Foundation. The probe learns that place once (a throwaway operation
// announces both keys), and a getter read whose caller is that place is an announcement.
//
// If a Foundation release moves or inlines that read-back, calibration fails: every spec that
// makes a `TracedGreeting` on Linux then records one issue saying so (see `TracedGreeting`),
// instead of judging announcements it can no longer see. Fix the calibration here.

/// Tells which getter reads are announcements: Foundation reading the value back inside `didChangeValue`.
///
/// On Linux a subclass cannot observe notifications, but `didChangeValue(forKey:)` reads the property
/// back from one place in Foundation. A probe operation learns that place's return address once; a
/// getter read whose caller is that place is an announcement, and no ordinary read can be.
enum AnnouncementSite {
    /// How deep the getter's caller sits in `returnAddresses()`, and the caller for each key.
    private static let calibration: (depth: Int, sites: [Announcement.Key: UInt])? = {
        let probe = SiteProbe()
        _ = probe.isFinished
        _ = probe.isExecuting
        probe.didChangeValue(forKey: "isFinished")
        probe.didChangeValue(forKey: "isExecuting")
        let direct = probe.frames[0], announced = probe.frames[2]
        guard probe.frames.count == 4,
            let depth = zip(direct, announced).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
        else { return nil }
        return (depth, [.isFinished: probe.frames[2][depth], .isExecuting: probe.frames[3][depth]])
    }()

    /// Whether the calling getter (for `key`) was called by an announcement.
    ///
    /// Call it directly from the getter, so that the getter's caller sits where calibration found it.
    @inline(never)
    static func isAnnouncing(_ key: Announcement.Key) -> Bool {
        guard let calibration, let site = calibration.sites[key] else { return false }
        let frames = returnAddresses()
        return frames.count > calibration.depth && frames[calibration.depth] == site
    }

    /// Whether announcements can be recognised on this platform.
    static var isAvailable: Bool { calibration != nil }

    private final class SiteProbe: Operation, @unchecked Sendable {  // used once, from one thread
        var frames: [[UInt]] = []
        override var isFinished: Bool {
            frames.append(AnnouncementSite.capture())
            return true
        }
        override var isExecuting: Bool {
            frames.append(AnnouncementSite.capture())
            return true
        }
        override func start() {}
    }

    @inline(never)
    fileprivate static func capture() -> [UInt] {
        returnAddresses()
    }
}

@inline(never)
private func returnAddresses() -> [UInt] {
    Thread.callStackReturnAddresses.map { $0.uintValue }
}
