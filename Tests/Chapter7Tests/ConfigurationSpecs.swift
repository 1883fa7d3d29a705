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
    // Look at the order of the lines around each addOperation in PhotoImporter.
    // Covers: C58
    @Test("every import reaches the queue already named and with its completion block", arguments: Entry.allCases)
    func configuredBeforeHandOff(_ entry: Entry) async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 3, queue: queue)
        let names = photos(3)
        switch entry {
        case .add: names.forEach { importer.add($0) }
        case .importAll: _ = ImportAllCall(importer, names, batchSize: 3)
        }

        await waitUntil("\(entry.rawValue) to hand the three imports to the importer's queue") {
            queue.handOffs.count >= 3
        }
        let imports = queue.handOffs.all.prefix(3)
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
            that block would never run: set it before adding.
            \(lesson.see("Configure, then enqueue"))
            """
        )

        await waitUntil("the three photos to import") {
            source.completeAll()
            return queue.operationCount == 0
        }
    }
}
