import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("An importer keeps its own references to the imports whose results it needs", .watched)
struct ReferenceSpecs {
    // A queue lets go of an operation as soon as it finishes, so queue.operations cannot find it
    // afterwards. Look at where outcome(of:) searches, for photos from add and from importAll.
    // Covers: C60
    // Paths: collaborators
    @Test(
        "the outcome of a photo is known while it copies and after the queue let go of it",
        arguments: ConfigurationSpecs.Entry.allCases
    )
    func outcomeOutlivesTheQueue(_ entry: ConfigurationSpecs.Entry) async {
        let source = HeldSource()
        let reports = Reports()
        let importer = PhotoImporter(source: source, width: 1, onReport: reports.callback)
        switch entry {
        case .add:
            guard await returning("add(_:)", section: "Configure, then enqueue", { importer.add("IMG_0001") }) != nil
            else { return source.completeAll() }
        case .importAll: _ = ImportAllCall(importer, ["IMG_0001"], batchSize: 1)
        }
        await waitUntil("the photo to start copying") { source.hasStarted("IMG_0001") }
        let whileCopying = await returning("outcome(of:)", section: "Keep your own references") {
            importer.outcome(of: "IMG_0001")
        }.flatMap { $0 }
        #expect(
            whileCopying == .pending,
            """
            Through \(entry.rawValue): while IMG_0001 was copying, outcome(of:) returned \
            \(whileCopying.map { "\($0)" } ?? "nil"); expected pending.
            \(lesson.see("Keep your own references"))
            """
        )

        source.complete("IMG_0001", bytes: 4_096)
        await waitUntil("the queue to let go of the finished import and report it") {
            importer.queue.operationCount == 0 && reports.report(for: "IMG_0001") != nil
        }
        let outcome = await returning("outcome(of:)", section: "Keep your own references") {
            importer.outcome(of: "IMG_0001")
        }.flatMap { $0 }
        #expect(
            outcome == .imported(bytes: 4_096),
            """
            Through \(entry.rawValue): outcome(of: "IMG_0001") returned \
            \(outcome.map { "\($0)" } ?? "nil") after the import finished; expected \
            imported(bytes: 4096). The queue no longer lists a finished operation: keep your own \
            reference to each import.
            \(lesson.see("Keep your own references"))
            """
        )
    }

    // A photo's name can come back: the same photo added again after its first import was
    // removed or cancelled is a second import. Look at how the completion block and outcome(of:)
    // find the import they speak of: by its name, or the import itself, and which one a name
    // stands for once it comes back.
    // Covers: C56, C60
    // Paths: reuse
    @Test(
        "a photo added again after its import was cancelled gets two reports, each with its own import's outcome, and outcome(of:) answers for the new one",
        arguments: CancellationSpecs.Cancel.allCases
    )
    func photoAddedAgainAfterACancel(_ cancel: CancellationSpecs.Cancel) async {
        let source = HeldSource()
        let reports = Reports()
        let importer = PhotoImporter(source: source, width: 1, onReport: reports.callback)
        let (copying, again) = ("IMG_0001", "IMG_0002")
        guard
            let jobs = await returning(
                "add(_:) of two photos", section: "Configure, then enqueue",
                { [copying, again].map { importer.add($0) } })
        else { return source.completeAll() }
        await waitUntil("\(copying) to start copying") { source.hasStarted(copying) }

        // With width 1, \(again) waits behind the copy; it is cancelled there and added again.
        guard
            await returning(
                "\(cancel.rawValue) while \(again) waits", section: "Cancelling is the only way out of a queue",
                {
                    switch cancel {
                    case .remove: importer.remove(jobs[1])
                    case .cancelAll: importer.cancelAll()
                    }
                }) != nil,
            let second = await returning(
                "add(_:) of \(again) again after \(cancel.rawValue)", section: "Configure, then enqueue",
                { importer.add(again) })
        else { return source.completeAll() }
        func said() -> [String] { reports.log.all.filter { $0.photo == again }.map { "\($0.outcome)" } }
        source.complete(copying)
        // The cancelled import leaves first; the new one then copies and is held.
        guard
            await waitUntil(
                "the cancelled \(again) to be reported (reports: \(reports.log.timeline))",
                hint: lesson.see("Completion blocks report results"),
                givingUpWhen: {
                    if importer.queue.isSuspended {
                        return "the queue is suspended, so the cancelled import cannot finish"
                    }
                    if source.hasStarted(again) && !jobs[1].isFinished {
                        return "the cancelled \(again) started copying"
                    }
                    return nil
                },
                { jobs[1].isFinished && !said().isEmpty })
        else { return source.completeAll() }
        await waitUntil("\(again), added again, to start copying") { source.hasStarted(again) }
        source.complete(again, bytes: 2_048)
        await waitUntil(
            "a second report for \(again) once it was imported (reports: \(reports.log.timeline))",
            hint: lesson.see("Completion blocks report results")
        ) { second.isFinished && said().count >= 2 }
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { said().count > 2 }
        #expect(
            said() == ["cancelled", "imported(bytes: 2048)"],
            """
            \(again) was cancelled with \(cancel.rawValue) while it waited, added again, and the new \
            import copied 2048 bytes; its reports said [\(said().joined(separator: ", "))], expected \
            [cancelled, imported(bytes: 2048)]. Each completion block reports what its own import \
            did: read the outcome from the import itself, not from whatever the importer now \
            keeps under the photo's name.
            \(lesson.see("Completion blocks report results"))
            """
        )
        let known = await returning("outcome(of:)", section: "Keep your own references") {
            importer.outcome(of: again)
        }.flatMap { $0 }
        #expect(
            known == .imported(bytes: 2_048),
            """
            outcome(of: "\(again)") answered \(known.map { "\($0)" } ?? "nil") after the photo, \
            cancelled once, was added again and imported 2048 bytes; expected imported(bytes: 2048). \
            A photo added again is a new import: the importer's records answer for the latest one.
            \(lesson.see("Keep your own references"))
            """
        )
        source.completeAll()
    }
}
