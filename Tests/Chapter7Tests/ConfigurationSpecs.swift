import Chapter7
import Foundation
import KataTestSupport
import Testing

@Suite("An import is fully configured before the queue receives it")
struct ConfigurationSpecs {
    /// The importer entry points that hand imports to the queue.
    enum Entry: String, CaseIterable, Sendable {
        case add = "add(_:)"
        case importAll = "importAll(_:batchSize:then:)"
    }

    // Once addOperation returns, the queue may already have started (or finished) the operation:
    // set its name and completion block first, whichever add method you use.
    // Covers: C58
    @Test("every import reaches the queue already named and with its completion block", arguments: Entry.allCases)
    func configuredBeforeHandOff(_ entry: Entry) async {
        let source = HeldSource()
        let queue = WatchedQueue()
        let importer = PhotoImporter(source: source, width: 3, queue: queue)
        let names = photos(3)
        switch entry {
        case .add: names.forEach { importer.add($0) }
        case .importAll: importer.importAll(names, batchSize: 3) {}
        }

        let imports = queue.handOffs.all.prefix(3)
        #expect(
            imports.count == 3,
            "\(entry.rawValue) handed \(imports.count) of 3 imports to the importer's queue."
        )
        let bare = imports.filter { $0.name == nil || !$0.hasCompletionBlock }
        #expect(
            bare.isEmpty,
            """
            Through \(entry.rawValue), \(bare.count) of \(imports.count) imports reached the queue \
            without a name or a completion block; they were set after adding. The queue may start \
            an operation the moment it has it: configure it fully, then add it.
            \(lesson.see("Configure, then enqueue"))
            """
        )

        await waitUntil("the three photos to import") {
            source.completeAll()
            return queue.operationCount == 0
        }
    }
}
