import Chapter13
import Foundation
import KataTestSupport
import Testing

@Suite("A finished import leaves nothing behind", .watched)
struct LifetimeSpecs {
    /// An error the card throws that is an object, so that the spec can see whether anything
    /// still keeps it once the import that threw it has ended.
    final class DamagedSector: Error, Sendable, CustomStringConvertible {
        var description: String { "a damaged sector" }
    }

    // Look at what the importer keeps of an import once it has ended, returned or thrown: its
    // task keeps the photos or the error until the task is let go. Lesson: "Cancelling from
    // outside the tree".
    // Covers: C97
    @Test(
        "once an import has returned or thrown, the importer keeps neither its photos nor its error, and lets itself go"
    )
    func finishedImportsAreLetGo() async {
        let card = Card(holding: ["a", "b"])
        defer { card.releaseAll() }
        var importer: Importer? = Importer(card: card, width: 1)
        let owner = WeakReference(importer)
        let hint = lesson.see("Cancelling from outside the tree")
        // A weak reference to the storage of the photos the first import returns, and later to
        // the error the next one throws: the spec keeps no strong one once it has them.
        let photos = Protected<WeakReference<AnyObject>?>(nil)
        let failed = Protected<String?>(nil)
        Task { [importer] in
            do {
                let returned = try await importer?.importAll(["a", "b"], progress: { _, _ in }) ?? []
                guard returned.count == 2 else {
                    failed.withValue { $0 = "returned \(returned.count) photos" }
                    return
                }
                photos.withValue { $0 = WeakReference(storage(of: returned)) }
            } catch {
                failed.withValue { $0 = "threw “\(error)”" }
            }
        }
        guard
            await waitUntil(
                "the copy of a or b to begin", hint: hint, givingUpWhen: beyond(1, on: card),
                { card.running.count == 1 })
        else { return }
        guard !(await comesTrue(within: window) { card.peak > 1 }) else {
            Issue.record(
                "\(beyond(1, on: card)() ?? "two copies ran at once"). \(lesson.see("A width is yours to keep"))")
            return
        }
        card.releaseAll()
        guard
            await waitUntil(
                "the import of a and b to return", hint: "It \(failed.value ?? "was still running"). \(hint)",
                givingUpWhen: { failed.value.map { "it \($0)" } }, { photos.value != nil })
        else { return }
        card.fail("x") { DamagedSector() }
        // A weak reference to the error the next import throws, taken in a task of its own so
        // that an import that never ends costs only a bounded wait.
        let fault = Protected<WeakReference<DamagedSector>?>(nil)
        let other = Protected<String?>(nil)
        Task { [importer] in
            do {
                _ = try await importer?.importAll(["x"], progress: { _, _ in })
                other.withValue { $0 = "returned, though the card failed its copy" }
            } catch let thrown as DamagedSector {
                fault.withValue { $0 = WeakReference(thrown) }
            } catch {
                other.withValue { $0 = "threw “\(error)”, not the card's error" }
            }
        }
        guard
            await waitUntil(
                "the import of x to throw the card's error", hint: lesson.see("An error ends the group"),
                givingUpWhen: { other.value.map { "it \($0)" } }, { fault.value != nil })
        else { return }
        let letGo = await comesTrue(within: patience) { photos.value?.value == nil && fault.value?.value == nil }
        #expect(
            letGo,
            """
            Two imports had ended, one returning a and b, one throwing the card's error; \
            \(patience.seconds) s later the importer still kept \
            \([photos.value?.value.map { _ in "the photos" }, fault.value?.value.map { _ in "the error" }].compactMap { $0 }.joined(separator: " and ")). \
            Each import's task keeps its result until it is let go: an importer that records its \
            imports where cancelAll() can find them must remove each one as it ends, on every \
            path (a defer does), or it keeps every import it ever ran.
            \(hint)
            """)
        importer = nil
        let gone = await comesTrue(within: patience) { owner.value == nil }
        #expect(
            gone,
            """
            Nothing but the importer's own imports kept it, and they had ended, yet it was not \
            freed: something it keeps keeps it in turn (a task recorded in it that captured self, \
            say).
            \(hint)
            """)
    }
}
