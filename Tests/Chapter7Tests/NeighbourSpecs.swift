import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Two importers side by side never reach into each other", .watched)
struct NeighbourSpecs {
    /// What the spec does to one importer while another one, with the same photo names, works.
    enum Control: String, CaseIterable, Sendable {
        case pause = "pauseForEject(then:)"
        case wait = "waitForAll()"
        case outcome = "outcome(of:)"
    }

    // The queue, the eject, the wait and the records belong to one importer. Look for anything
    // an importer keeps in a `static` or a global: a queue every importer shares by default, a
    // process-wide group to wait on, a dictionary of imports by photo.
    // Covers: C54, C55, C60
    // Paths: interference
    @Test(
        "pausing, waiting for or asking one importer leaves another importer with the same photo names alone",
        arguments: Control.allCases
    )
    func oneImporterLeavesAnotherAlone(_ control: Control) async {
        let (cardA, cardB) = (HeldSource(), HeldSource())
        let (reportsA, reportsB) = (Reports(), Reports())
        // Each importer with the queue it makes itself: nothing of the spec joins them.
        let a = PhotoImporter(source: cardA, width: 2, onReport: reportsA.callback)
        let b = PhotoImporter(source: cardB, width: 2, onReport: reportsB.callback)
        let photo = "IMG_0001"
        defer {
            cardA.completeAll()
            cardB.completeAll()
        }
        guard
            await returning(
                "add(_:) of \(photo) to each importer", section: "Configure, then enqueue",
                { () -> Void in
                    a.add(photo)
                    b.add(photo)
                }) != nil
        else { return }
        await waitUntil("\(photo) to start copying on both cards") {
            cardA.hasStarted(photo) && cardB.hasStarted(photo)
        }

        switch control {
        case .pause:
            let ready = Protected(false)
            guard
                await returning(
                    "a.pauseForEject(then:)", section: "Suspending stops starts, not work",
                    { a.pauseForEject { ready.withValue { $0 = true } } }) != nil,
                await returning(
                    "b.add(_:) while a is paused", section: "Configure, then enqueue", { b.add("IMG_0002") })
                    != nil
            else { return }
            let started = await waitUntil(
                "the other importer, which nobody paused, to start copying IMG_0002",
                hint: """
                    Pausing one importer for eject held back another importer's copies. What \
                    pauseForEject suspends, and any mark it leaves, belongs to one importer: its own \
                    queue, never one kept in a static or a global that every importer shares.
                    \(lesson.see("Suspending stops starts, not work"))
                    """,
                givingUpWhen: { b.queue.isSuspended ? "its queue is suspended" : nil }
            ) { cardB.hasStarted("IMG_0002") }
            if started {
                cardA.complete(photo)
                await waitUntil("the paused importer's card to be ready once its copy returned") { ready.value }
            }
            _ = await returning("a.resume()", section: "Suspending stops starts, not work") { a.resume() }
        case .wait:
            let returned = WaitingSpecs.waitOnItsOwnThread(a)
            cardA.complete(photo)
            await waitUntil("the report for \(photo) from the importer that waits") {
                reportsA.report(for: photo) != nil
            }
            // Nothing of a is left; b still copies, and will until the spec lets it.
            await waitUntil(
                "a.waitForAll() to return once a's only photo was imported, while b still copied",
                hint: """
                    Waiting for one importer waited for another importer's copy too. waitForAll() \
                    waits for this importer's queue to empty: a queue or a group kept in a static \
                    or a global, which every importer shares, also holds the others' work.
                    \(lesson.see("Waiting for a queue to empty"))
                    """
            ) { returned.value }
            cardB.completeAll()
            await waitUntil("a.waitForAll() to return once every copy returned") { returned.value }
        case .outcome:
            cardA.complete(photo, bytes: 100)
            cardB.complete(photo, bytes: 200)
            await waitUntil("both importers to report \(photo)") {
                reportsA.report(for: photo) != nil && reportsB.report(for: photo) != nil
            }
            guard
                let known = await returning(
                    "outcome(of:) on each importer", section: "Keep your own references",
                    { [a.outcome(of: photo), b.outcome(of: photo)] })
            else { return }
            #expect(
                known == [.imported(bytes: 100), .imported(bytes: 200)],
                """
                Two importers each imported a photo named \(photo), of 100 and of 200 bytes; their \
                outcome(of:) answered \(known.map { $0.map { "\($0)" } ?? "nil" }.joined(separator: " and ")). \
                Each importer keeps its own records: kept in a static or a global, one importer \
                answers with another's import of the same name.
                \(lesson.see("Keep your own references"))
                """
            )
        }
    }
}
