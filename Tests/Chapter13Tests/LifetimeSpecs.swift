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

    // Look at what the importer keeps of an import once it has ended, returned, thrown or been
    // cancelled (by its caller or by cancelAll()): its task keeps the photos or the error until
    // the task is let go. Lesson: "Cancelling from outside the tree".
    // Covers: C97
    // Paths: memory, collaborators
    @Test(
        "once an import has returned, thrown or been cancelled, the importer keeps neither its photos nor its error, and lets itself go"
    )
    func finishedImportsAreLetGo() async {
        let card = Card(holding: ["a", "b", "y", "z"])
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
        card.release("a")
        card.release("b")
        guard
            await waitUntil(
                "the import of a and b to return", hint: "It \(failed.value ?? "was still running"). \(hint)",
                givingUpWhen: { failed.value.map { "it \($0)" } }, { photos.value != nil })
        else { return }
        // Let go at once, not only once later imports have ended: something the importer keeps of
        // its newest import would be replaced by the next one.
        guard await letGo(photos.value, "the photos of the import of a and b, which had returned", hint) else {
            return
        }
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
        guard await letGo(fault.value, "the card's error the import of x had thrown", hint) else { return }
        // Two imports end in CancellationError: one whose caller is cancelled, one that
        // cancelAll() stops. An error is an object too (the box it travels in): the import's
        // task keeps the one it threw as its result, which its caller is handed, and which is
        // often the one the card threw as the copy was cancelled.
        guard let byCaller = await cancelledError(of: importer, "y", on: card, by: { $0.cancel() }) else { return }
        guard let byCancelAll = await cancelledError(of: importer, "z", on: card, by: { _ in importer?.cancelAll() })
        else { return }
        let kept = {
            [
                photos.value?.value.map { _ in "the photos of the import that returned" },
                fault.value?.value.map { _ in "the error of the import that failed" },
                byCaller.value.map { _ in "the CancellationError of the import whose caller was cancelled" },
                byCancelAll.value.map { _ in "the CancellationError of the import cancelAll() stopped" },
                card.cancellationsKept > 0 ? "the CancellationError a cancelled copy threw" : nil,
            ].compactMap { $0 }
        }
        let letGo = await comesTrue(within: patience) { kept().isEmpty }
        #expect(
            letGo,
            """
            Four imports had ended: one returned a and b, one threw the card's error, one was \
            cancelled by its caller and one by cancelAll(); \(patience.seconds) s later the importer \
            still kept \(kept().joined(separator: ", ")). Each import's task keeps its result, \
            photos or error, until it is let go: an importer that records its imports where \
            cancelAll() can find them must remove each one as it ends, on every path, a cancel \
            included (a defer does), or it keeps every import it ever ran.
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

    /// Whether what `reference` points to is let go within `patience` of the import that made it
    /// ending, before any other import begins; records an issue naming `what` if not.
    private func letGo<Object: AnyObject>(
        _ reference: WeakReference<Object>?, _ what: String, _ hint: String
    ) async -> Bool {
        let gone = await comesTrue(within: patience) { reference?.value == nil }
        #expect(
            gone,
            """
            The importer still kept \(what) \(patience.seconds) s after that import ended, before \
            any other import began. Nothing of an import that has ended stays in the importer, \
            however it ended and whatever comes next: not its task, and not its photos or its error \
            kept in a property "for later", which only the next import would replace.
            \(hint)
            """)
        return gone
    }

    /// Imports `name`, which `card` holds, in a task of its own, cancels it with `cancel` (handed
    /// that task) once its copy has begun, and returns a weak reference to the
    /// `CancellationError` the import threw; nil, with an issue recorded, if it ended otherwise.
    private func cancelledError(
        of importer: Importer?, _ name: String, on card: Card, by cancel: (Task<Void, Never>) -> Void
    ) async -> WeakReference<AnyObject>? {
        let thrown = Protected<WeakReference<AnyObject>?>(nil)
        let other = Protected<String?>(nil)
        let caller = Task { [importer] in
            do {
                _ = try await importer?.importAll([name], progress: { _, _ in })
                other.withValue { $0 = "returned" }
            } catch {
                // An error travels in a box, one object from the throw to the catch: the
                // import's task keeps that same box as its result.
                if error is CancellationError {
                    let box = WeakReference(unsafeBitCast(error as any Error, to: AnyObject.self))
                    thrown.withValue { $0 = box }
                } else {
                    other.withValue { $0 = "threw “\(error)”" }
                }
            }
        }
        let hint = lesson.see("Cancelling from outside the tree")
        guard await waitUntil("the copy of \(name) to begin", hint: hint, { card.saw("\(name) began") }) else {
            return nil
        }
        cancel(caller)
        guard
            await waitUntil(
                "the import of \(name) to throw CancellationError once cancelled", hint: hint,
                givingUpWhen: { other.value.map { "it \($0)" } }, { thrown.value != nil })
        else { return nil }
        return thrown.value
    }
}
