import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("An import is fully configured before the queue receives it", .watched)
struct ConfigurationSpecs {
    /// The importer entry points that hand imports to the queue.
    enum Entry: String, CaseIterable, Sendable {
        case add = "add(_:)"
        case importAll = "importAll(_:batchSize:then:)"
    }

    // Once addOperation returns, the queue may already have started (or finished) the operation.
    // Look at the order of the lines around each addOperation in PhotoImporter, for every batch.
    // Covers: C58
    @Test(
        "every import reaches the queue already named and with its completion block, later batches too",
        arguments: Entry.allCases
    )
    func configuredBeforeHandOff(_ entry: Entry) async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 3, queue: queue)
        let names = photos(6)
        var call: ImportAllCall?
        switch entry {
        case .add:
            guard
                await returning(
                    "add(_:) of six photos", section: "Configure, then enqueue",
                    {
                        names.forEach { importer.add($0) }
                    }) != nil
            else { return source.completeAll() }
        case .importAll: call = ImportAllCall(importer, names, batchSize: 3)
        }

        // The first three reach the queue at once; through importAll the next three only once
        // the first batch is done.
        await waitUntil("\(entry.rawValue) to hand the first three imports to the importer's queue") {
            queue.handOffs.count >= 3
        }
        await waitUntil("the first three photos to start copying") { source.started.count >= 3 }
        names.prefix(3).forEach { source.complete($0) }
        await waitUntil("\(entry.rawValue) to hand all six imports to the importer's queue") {
            queue.handOffs.count >= names.count
        }
        let imports = queue.handOffs.all.prefix(names.count)
        let unnamed = imports.filter { $0.name != $0.photo }.map(\.photo)
        #expect(
            unnamed.isEmpty,
            """
            Through \(entry.rawValue), \(unnamed.joined(separator: ", ")) reached the queue without \
            its photo's name; it was set after adding. The queue may start an operation the moment \
            it has it: configure it fully, then add it.
            \(lesson.see("Configure, then enqueue"))
            """
        )
        // A design that reports through another operation needs no completion block; one that has
        // a completion block must have set it before the queue could finish the import.
        let late = imports.filter { !$0.hasCompletionBlock && queue.handedImport($0.photo)?.completionBlock != nil }
        #expect(
            late.isEmpty,
            """
            Through \(entry.rawValue), \(late.map(\.photo).joined(separator: ", ")) got a \
            completion block only after it reached the queue. If the import had already finished, \
            that block would never run: set it before adding, for every batch.
            \(lesson.see("Configure, then enqueue"))
            """
        )

        await waitUntil("the six photos to import") {
            source.completeAll()
            return queue.operationCount == 0 && (call?.done.value ?? true)
        }
    }
}
