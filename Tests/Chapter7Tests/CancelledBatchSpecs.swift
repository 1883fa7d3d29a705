import Chapter7
import Foundation
import KataTestSupport
import Testing

/// A queue that remembers, weakly, every operation other than an import that it was handed,
/// with the imports it depended on then.
final class HelperWatch: OperationQueue, @unchecked Sendable {  // adds only a locked list
    /// An operation that is not an import, and the imports it waited for when it was added.
    struct Helper: Sendable {
        let operation: WeakReference<Operation>
        let waitsFor: [WeakReference<PhotoImport>]
        let photos: [String]
        let kind: String
    }

    let helpers = Protected<[Helper]>([])

    override func addOperation(_ op: Operation) {
        note([op])
        super.addOperation(op)
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        note(ops)
        super.addOperations(ops, waitUntilFinished: wait)
    }

    /// A helper already freed while an import it depended on has not finished, if there is one.
    var freedTooEarly: Helper? {
        helpers.value.first { helper in
            helper.operation.value == nil && helper.waitsFor.contains { $0.value?.isFinished == false }
        }
    }

    /// Whether every helper has either gone or has nothing left to wait for.
    var settled: Bool {
        helpers.value.allSatisfy { helper in
            helper.operation.value == nil || helper.waitsFor.allSatisfy { $0.value?.isFinished ?? true }
        }
    }

    private func note(_ ops: [Operation]) {
        for op in ops where !(op is PhotoImport) {
            let imports = op.dependencies.compactMap { $0 as? PhotoImport }
            guard !imports.isEmpty else { continue }
            let helper = Helper(
                operation: WeakReference(op), waitsFor: imports.map { WeakReference($0) },
                photos: imports.map(\.photo), kind: "\(type(of: op))")
            helpers.withValue { $0.append(helper) }
        }
    }
}

/// A batched import is cancelled while its copies run; they then end one at a time.
///
/// Runs in a child process: on Linux, a design that lets a cancelled operation go before the
/// imports it depends on makes the next of those imports touch freed memory when it finishes.
enum CancelledBatchScenario {
    static let name = "cancelledBatchEndsOneByOne"

    static func run() async {
        exitIfStillRunning(after: Bound.standard * 3, status: EXIT_FAILURE)
        let source = HeldSource()
        let queue = HelperWatch()
        let importer = PhotoImporter(source: source, width: 3, queue: queue)
        let names = photos(6)
        let batch = Array(names.prefix(3))
        let call = ImportAllCall(importer, names, batchSize: 3)
        guard await comesTrue(within: Bound.standard, { source.started.count >= 3 }) else {
            LastWords.fail(
                name,
                "importAll(6 photos, batchSize: 3) with width 3 started \(source.started.count) copies, not its first batch of 3."
            )
        }
        LastWords.note(name, "cancelAll() never returned (the child waited \((Bound.standard * 3).seconds) s).")
        importer.cancelAll()
        for photo in batch {
            LastWords.note(
                name,
                """
                The program stopped while \(photo)'s copy ended, after cancelAll(). \
                \(queue.helpers.value.isEmpty ? "" : Self.cause)
                """)
            source.complete(photo)
            // Gives a cancelled helper the time to finish and go; one kept until its imports end
            // is fine, and the window closes early when there is none.
            _ = await comesTrue(within: Bound.scaled(.milliseconds(200))) { queue.settled }
            #if os(Linux)
                if let helper = queue.freedTooEarly {
                    let waiting = zip(helper.photos, helper.waitsFor)
                        .filter { $0.1.value?.isFinished == false }.map(\.0)
                    LastWords.fail(
                        name,
                        """
                        After cancelAll(), a \(helper.kind) the importer had added to its import queue, \
                        depending on \(helper.photos.joined(separator: ", ")), was cancelled, finished \
                        and was freed while \(waiting.joined(separator: ", ")) still copied. \(Self.cause)
                        """)
                }
            #endif
        }
        guard await comesTrue(within: Bound.standard, { call.done.value || queue.isSuspended }), !queue.isSuspended
        else {
            if queue.isSuspended {
                LastWords.fail(
                    name,
                    "After cancelAll() the queue was suspended, so the cancelled batch could not finish and importAll never called done."
                )
            }
            LastWords.fail(
                name,
                """
                importAll never called done after cancelAll() ended its import (waited \
                \(Bound.standard.seconds) s). A BlockOperation that feeds the next batch from the \
                import queue is cancelled by cancelAllOperations() too, and a cancelled \
                BlockOperation never runs its block.
                """)
        }
        _ = await comesTrue(within: Bound.scaled(.milliseconds(20))) { call.doneCalls.value > 1 }
        guard call.doneCalls.value == 1, source.started.sorted() == batch else {
            LastWords.fail(
                name,
                """
                After cancelAll() during the first batch, importAll called done \(call.doneCalls.value) \
                times (expected once) and copies started for \(source.started.joined(separator: ", ")) \
                (expected only the first batch).
                """)
        }
    }

    /// What goes wrong on Linux, and what to do instead.
    static let cause = """
        cancelAllOperations() cancels every operation in the queue, the importer's own \
        bookkeeping too, and a cancelled operation is ready at once: it finishes without waiting \
        for the imports it depends on. On Linux an operation refers to the operations that depend \
        on it without keeping them alive (swift-corelibs-foundation), so once nothing else keeps \
        the finished helper, the next of its imports to finish touches freed memory: a memory \
        fault (signal 11) that looks random. Keep the bookkeeping out of the queue you cancel (an \
        operation queue of its own, or the imports' completion blocks), or keep the helper until \
        its batch has ended.
        """
}

@Suite("A cancelled batch ends safely however its copies end", .watched)
struct CancelledBatchSpecs {
    // Run in a child process, because on Linux this mistake is a memory fault. Look at where
    // importAll's bookkeeping lives: does cancelAll() cancel it too, and who keeps it afterwards?
    // Covers: C51, C57
    // Paths: collaborators
    @Test("a batched import cancelled while its copies run ends once when those copies end one by one")
    func cancelledBatchEndsOneByOne() async {
        LastWords.forget(CancelledBatchScenario.name)
        let outcome = await #expect(
            processExitsWith: .success,
            """
            importAll(6 photos, batchSize: 3) was cancelled while its first batch copied, and the \
            three copies then ended one at a time: expected done once, no other copy, and the \
            program still running.
            \(lesson.see("Feed a queue in batches"))
            """
        ) {
            await CancelledBatchScenario.run()
        }
        LastWords.explain(CancelledBatchScenario.name, outcome)
    }
}
