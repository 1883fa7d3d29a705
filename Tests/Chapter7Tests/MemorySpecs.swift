import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("Nothing outlives an importer its owner let go of", .watched)
struct MemorySpecs {
    /// The ways an import can end before the owner lets go of the importer.
    enum Exit: String, CaseIterable, Sendable {
        case imported = "photos imported through add(_:)"
        case removed = "a photo removed while it waited"
        case cancelledAll = "photos cancelled with cancelAll()"
        case batched = "photos imported through importAll"
        case batchCancelled = "a batched import stopped by cancelAll()"
        case releasedWhileCopying = "an importer let go of while a copy still ran"
        case ejected = "an import paused for eject, then resumed"
    }

    /// Runs `exit` with an importer that only this function holds; returns weak references to
    /// the importer, to every import the queue received, and to what the callbacks handed to the
    /// importer (`done`, `ready`) captured.
    static func run(
        _ exit: Exit, _ source: HeldSource, _ queue: WatchedQueue, _ reports: Reports
    ) async -> (
        importer: WeakReference<PhotoImporter>, imports: [WeakReference<PhotoImport>],
        callbacks: [WeakReference<CallbackCapture>]
    )? {
        let importer = PhotoImporter(source: source, width: 2, queue: queue, onReport: reports.callback)
        let names = photos(4)
        var callbacks: [WeakReference<CallbackCapture>] = []
        let suspended = { queue.isSuspended ? "the queue is suspended, so the cancelled imports cannot finish" : nil }
        switch exit {
        case .imported, .removed, .cancelledAll, .releasedWhileCopying, .ejected:
            guard
                let jobs = await returning(
                    "add(_:) of four photos", section: "Configure, then enqueue",
                    {
                        names.map { importer.add($0) }
                    })
            else { return nil }
            guard await waitUntil("two photos to start copying", { source.started.count >= 2 }) else { return nil }
            let cancel: (@Sendable () -> Void)? =
                switch exit {
                case .removed: { importer.remove(jobs[3]) }
                case .cancelledAll: { importer.cancelAll() }
                default: nil
                }
            if exit == .ejected {
                let ready = Protected(false)
                let capture = CallbackCapture()
                callbacks.append(WeakReference(capture))
                guard
                    await returning(
                        "pauseForEject(then:)", section: "Suspending stops starts, not work",
                        {
                            importer.pauseForEject {
                                withExtendedLifetime(capture) {}
                                ready.withValue { $0 = true }
                            }
                        }) != nil
                else { return nil }
                guard
                    await waitUntil(
                        "the card to be ready once the running copies finished",
                        {
                            source.completeAll()
                            return ready.value
                        })
                else { return nil }
                guard
                    await returning("resume()", section: "Suspending stops starts, not work", { importer.resume() })
                        != nil
                else { return nil }
            }
            if let cancel {
                guard
                    await returning("\(exit.rawValue)", section: "Cancelling is the only way out of a queue", cancel)
                        != nil
                else { return nil }
            }
        case .batched, .batchCancelled:
            let call = ImportAllCall(importer, names, batchSize: 2)
            callbacks.append(call.doneCapture)
            await waitUntil("the first batch to start copying") { source.started.count >= 2 }
            if exit == .batchCancelled {
                guard
                    await returning(
                        "cancelAll()", section: "Cancelling is the only way out of a queue",
                        {
                            importer.cancelAll()
                        }) != nil
                else { return nil }
            }
            guard
                await waitUntil(
                    "importAll to call done", givingUpWhen: suspended,
                    {
                        source.completeAll()
                        return call.done.value
                    })
            else { return nil }
        }
        if exit != .releasedWhileCopying {
            guard
                await waitUntil(
                    "every photo to be imported or cancelled", givingUpWhen: suspended,
                    {
                        source.completeAll()
                        return queue.operationCount == 0
                    })
            else { return nil }
        }
        return (
            WeakReference(importer), names.compactMap { queue.handedImport($0) }.map { WeakReference($0) },
            callbacks
        )
    }

    // On Linux a completion block is never cleared, so whatever it holds stays as long as its
    // operation, and the importer keeps every import. Look at what each completion block (and
    // anything else the importer hands out) captures, and at where the caller's callbacks go.
    // Covers: C81, C56
    // Paths: memory, collaborators
    @Test(
        "once its imports ended and the owner let go, the importer and every import are freed",
        arguments: Exit.allCases
    )
    func nothingOutlivesTheImporter(_ exit: Exit) async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let reports = Reports()
        guard let (importer, imports, callbacks) = await Self.run(exit, source, queue, reports) else {
            return source.completeAll()
        }
        guard
            await waitUntil(
                "every import to finish", givingUpWhen: { queue.isSuspended ? "the queue is suspended" : nil },
                {
                    source.completeAll()
                    return imports.allSatisfy { $0.value?.isFinished ?? true }
                })
        else { return }
        queue.letGo()

        func alive() -> String {
            let jobs = imports.compactMap(\.value).map(\.photo)
            let importerAlive = importer.value == nil ? [] : ["the importer"]
            let callbacksAlive = callbacks.contains { $0.value != nil } ? ["what the caller's callback captured"] : []
            return (importerAlive + jobs + callbacksAlive).joined(separator: ", ")
        }
        await waitUntil(
            "the importer, its imports and what the caller's callbacks captured to be freed after \(exit.rawValue) (still alive: \(alive()))",
            hint: """
                After \(exit.rawValue), the owner let go of the importer and every import had \
                ended, yet something still holds them. On Linux a completion block stays with its \
                operation for good (swift-corelibs-foundation never clears it): a block that \
                captures its import, or the importer that keeps every import, is a cycle that \
                never ends. Capture the import weakly (the importer keeps it while it matters) and \
                only the values the report needs, never the importer itself; the same goes for \
                every other closure the importer hands out (the eject check, a timer). A callback \
                the caller handed in (`done`, `ready`) is the caller's: keep it only until you \
                called it, and never in a `static` that outlives the importer.
                \(lesson.see("Completion blocks report results"))
                """
        ) {
            importer.value == nil && imports.allSatisfy { $0.value == nil }
                && callbacks.allSatisfy { $0.value == nil }
        }
    }
}
