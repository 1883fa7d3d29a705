import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Waiting for a queue waits for work added while waiting", .watched)
struct WaitingSpecs {
    /// Calls `waitForAll()` on a thread of its own and notes when it returns.
    ///
    /// The wait is synchronous, so it never runs on the spec's task; the spec completes every
    /// copy before it ends, so the thread is never left blocked.
    static func waitOnItsOwnThread(_ importer: PhotoImporter) -> Protected<Bool> {
        let returned = Protected(false)
        Thread.detachNewThread {
            importer.waitForAll()
            returned.withValue { $0 = true }
        }
        return returned
    }

    // waitUntilAllOperationsAreFinished waits until the queue is empty, so it also waits for
    // operations other threads add while it waits, started or still waiting for a place. Look at
    // what waitForAll waits on: the queue, a snapshot of it, or the copies running now.
    // Covers: C55
    // Paths: collaborators
    @Test("waitForAll() returns only after photos another thread added during the wait")
    func waitCoversLateArrivals() async {
        let source = HeldSource()
        let queue = WatchedQueue(serialStarts: true)
        let importer = PhotoImporter(source: source, width: 2, queue: queue)
        guard
            let first = await returning("add(_:)", section: "Configure, then enqueue", { importer.add("IMG_0001") })
        else { return source.completeAll() }
        await waitUntil("the first photo to start copying") { source.hasStarted("IMG_0001") }

        let returned = Self.waitOnItsOwnThread(importer)
        // The waiter must be waiting before the second photo arrives. A queue-wide wait shows
        // itself at once; a wait written another way gets a short head start.
        _ = await comesTrue(within: Bound.scaled(.milliseconds(200))) {
            queue.waits.value > 0 || returned.value
        }
        #expect(
            !returned.value,
            """
            waitForAll() returned while IMG_0001 was still copying; it must block until the \
            queue is empty.
            \(lesson.see("Waiting for a queue to empty"))
            """
        )

        guard
            let second = await returning(
                "add(_:) while another thread waits in waitForAll()", section: "Waiting for a queue to empty",
                suspect: " (a lock that waitForAll() holds while it waits?)", { importer.add("IMG_0002") }
            )
        else { return source.completeAll() }
        await waitUntil("the second photo to start copying") { source.hasStarted("IMG_0002") }
        source.complete("IMG_0001")
        await waitUntil("the first photo to finish") { first.isFinished }
        // A wait that covers only what it saw wakes up as soon as IMG_0001 finishes.
        let returnedEarly = await comesTrue(within: Bound.scaled(.milliseconds(150))) { returned.value }
        #expect(
            !returnedEarly,
            """
            waitForAll() returned while IMG_0002, added by another thread during the wait, had not \
            been imported. Waiting on the operations that were there when the wait began (or on \
            a barrier placed then) misses late arrivals; waitUntilAllOperationsAreFinished() waits \
            until the queue is empty.
            \(lesson.see("Waiting for a queue to empty"))
            """
        )

        // Two more arrive: IMG_0003 takes the free place, IMG_0004 waits for one (width 2).
        guard
            let late = await returning(
                "add(_:) of two more photos while another thread waits in waitForAll()",
                section: "Waiting for a queue to empty", { ["IMG_0003", "IMG_0004"].map { importer.add($0) } })
        else { return source.completeAll() }
        await waitUntil("the third photo to start copying") { source.hasStarted("IMG_0003") }
        // Both copies end while the queue's next start is held: for a moment no copy runs, and
        // IMG_0004 still waits in the queue.
        queue.holdStarts()
        source.complete("IMG_0002")
        source.complete("IMG_0003")
        await waitUntil("the second and third photos to finish") { second.isFinished && late[0].isFinished }
        // A wait for the copies running now wakes up here.
        let returnedIdle = await comesTrue(within: Bound.scaled(.milliseconds(150))) { returned.value }
        queue.releaseStarts()
        #expect(
            !returnedIdle,
            """
            waitForAll() returned while IMG_0004, added during the wait, was still waiting for its \
            place in the queue, at a moment when no copy ran. Waiting for the copies running now \
            (a count of them, or the imports executing) misses imports that wait for a place; \
            waitUntilAllOperationsAreFinished() waits until the queue is empty.
            \(lesson.see("Waiting for a queue to empty"))
            """
        )

        await waitUntil("the fourth photo to start copying") { source.hasStarted("IMG_0004") }
        source.complete("IMG_0004")
        await waitUntil(
            "waitForAll() to return once every photo was imported",
            hint: lesson.see("Waiting for a queue to empty")
        ) { returned.value }
    }
}
