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

    // What `outcome(of:)` answers belongs to one importer, and goes with it. Look at where
    // `PhotoImporter` keeps it, and at what it is found by: a record kept by the importer's
    // `ObjectIdentifier` outlives its importer, and a new importer made at the freed one's address
    // has the same identifier. Runs in a child process: such a record lives in a `static`, which
    // the specs beside this one would fill too.
    // Covers: C81, C60
    // Paths: memory, interference
    @Test("a new importer answers nil for a photo it never added, also one made where a freed importer was")
    func aNewImporterKnowsNothingOfAFreedOne() async {
        LastWords.forget(FreedImporterScenario.name)
        let outcome = await #expect(
            processExitsWith: .success,
            """
            An importer imported IMG_0001, answered its outcome, and was let go; importers made \
            afterwards, one of them at the freed importer's address, should each answer nil for \
            IMG_0001, which none of them added.
            \(lesson.see("Keep your own references"))
            """
        ) {
            await FreedImporterScenario.run()
        }
        LastWords.explain(FreedImporterScenario.name, outcome)
    }
}

/// An importer imports a photo and is let go; importers are then made, one at a time, until one
/// sits where the freed one was, and each is asked for that photo.
enum FreedImporterScenario {
    static let name = "freedImporterAddressReused"
    static let photo = "IMG_0001"

    /// Where an object sits in memory, as its `ObjectIdentifier` shows it.
    static func address(of object: AnyObject) -> Int {
        ObjectIdentifier(object).hashValue
    }

    /// Imports the photo with an importer only this function holds, and asks it for the photo's
    /// outcome; returns where the importer was and a weak reference to it.
    static func importAndLetGo() async -> (address: Int, importer: WeakReference<PhotoImporter>) {
        let importer = PhotoImporter(source: InstantSource(), width: 1)
        let job = importer.add(photo)
        guard await comesTrue(within: Bound.standard, { job.isFinished }) else {
            LastWords.fail(name, "The import of \(photo), from a card that copies at once, never finished.")
        }
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { importer.queue.operationCount == 0 }
        let expected = ImportOutcome.imported(bytes: photo.utf8.count)
        let answer = importer.outcome(of: photo)
        guard answer == expected else {
            LastWords.fail(
                name,
                """
                The importer that imported \(photo) answered outcome(of: "\(photo)") with \
                \(answer.map { "\($0)" } ?? "nil") once the import had finished; expected \(expected). \
                The queue lets go of a finished import: keep your own record of it.
                """)
        }
        return (address(of: importer), WeakReference(importer))
    }

    static func run() async {
        exitIfStillRunning(after: Bound.standard * 3, status: EXIT_FAILURE)
        let (freedAt, first) = await importAndLetGo()
        // Whatever keeps the importer alive is another spec's mistake; here only a freed one counts.
        guard await comesTrue(within: Bound.standard, { first.value == nil }) else { return }
        for attempt in 1...200 {
            let importer = PhotoImporter(source: InstantSource(), width: 1)
            let there = address(of: importer) == freedAt
            if let answer = importer.outcome(of: photo) {
                let place =
                    there
                    ? "at the address where the freed importer had been (importer number \(attempt) made since)"
                    : "elsewhere in memory"
                LastWords.fail(
                    name,
                    """
                    A new importer, made \(place), answered outcome(of: "\(photo)") with \(answer), \
                    though it never added that photo: a freed importer's record answered for it. What \
                    the importer knows lives in the importer, and goes with it; a record kept by the \
                    importer's ObjectIdentifier outlives it, and a new object at the same address has \
                    the same identifier.
                    """)
            }
            if there { return }
        }
    }
}
