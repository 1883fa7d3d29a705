import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("The result, or the error, is there the moment the operation is finished")
struct PublishingTheResult {
    // Store the result and flip the flags in one critical section, before announcing isFinished:
    // whoever hears the announcement (a dependent, a completion block) reads the result right away.
    // Covers: C22, C61
    @Test("the thumbnail is readable from every read that sees isFinished true, and from dependents")
    func resultBeforeFinished() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        operation.completionBlock = { [unowned operation, trace = loader.trace] in
            trace.record(operation.result == nil ? "completion ran (no result yet)" : "completion ran")
        }
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        guard await letWorkEnd("a", loader) else { return }
        guard
            await waitUntil(
                "the completion block and the dependent to run",
                hint: loader.trace.lifecycle(missing: "one of them never ran") + "\n"
                    + lesson.see("Finish when the work ends, once"),
                {
                    loader.trace.contains { $0.hasPrefix("sentinel ran") }
                        && loader.trace.contains { $0.hasPrefix("completion ran") }
                })
        else { return }
        #expect(
            operation.finishedWithoutResult == 0,
            """
            isFinished read true \(operation.finishedWithoutResult) time(s) while result was still nil: \
            the operation announced it finished before publishing the thumbnail.
            \(lesson.see("Publish the result, then announce"))
            """)
        #expect(
            loader.trace.contains("sentinel ran") && loader.trace.contains("completion ran"),
            """
            The dependent or the completion block found no result. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Publish the result, then announce"))
            """)
        let result = operation.result
        #expect(
            (try? result?.get()) == Thumbnail(name: "a", width: thumbnailWidth),
            """
            The result is \(describe(result)); expected success(a, \(thumbnailWidth) px).
            \(lesson.see("Publish the result, then announce"))
            """)
    }

    // Do not swallow errors with try?: catch what the work throws and publish it as .failure(error).
    // Covers: C61
    @Test("when the fetch throws, the operation finishes and its result is that error")
    func errorIsPublished() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        loader.fail("fetch a", with: LoaderError.missing("a"))
        guard
            await waitUntil(
                "the operation whose fetch failed to finish and its dependent to run",
                hint: loader.trace.lifecycle(missing: "it never finished, or the dependent never ran") + "\n"
                    + "A failure ends the work too: it must finish the operation.\n"
                    + lesson.see("Finish when the work ends, once"),
                { operation.isFinished && loader.trace.contains { $0.hasPrefix("sentinel ran") } })
        else { return }
        let result = operation.result
        var thrown: LoaderError?
        if case .failure(let error)? = result { thrown = error as? LoaderError }
        #expect(
            thrown == .missing("a"),
            """
            After the fetch threw LoaderError.missing("a"), the result is \(describe(result)); expected \
            that error. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Publish the result, then announce"))
            """)
    }

    // The first finish wins. A second finish(with:) must change nothing and announce nothing:
    // check the flag inside the lock and return if the operation already finished.
    // Covers: C22, C61
    @Test("finishing again after the work ended changes neither the result nor the state, and announces nothing")
    func finishingTwiceHasNoEffect() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation) }

        queue.addOperation(operation)
        guard await waitForLaunch(operation, loader) else { return }
        guard await letWorkEnd("a", loader) else { return }
        guard
            await waitUntil(
                "the operation to finish with its thumbnail",
                hint: loader.trace.lifecycle(missing: "never finished with a result") + "\n"
                    + lesson.see("Finish when the work ends, once"),
                { operation.isFinished && operation.result != nil })
        else { return }

        Probe.$isActive.withValue(true) {
            operation.finish(with: .failure(LoaderError.missing("late")))
        }
        let result = operation.result
        #expect(
            (try? result?.get()) == Thumbnail(name: "a", width: thumbnailWidth),
            """
            A second finish(with:) replaced the result: it is now \(describe(result)). The first finish wins.
            \(lesson.see("Finish when the work ends, once"))
            """)
        #expect(
            operation.isFinished && !operation.isExecuting,
            """
            After a second finish the operation reports isFinished \(operation.isFinished) and isExecuting \
            \(operation.isExecuting); expected true and false.
            \(lesson.see("Finish when the work ends, once"))
            """)
        #if !canImport(Darwin)
            // On Linux, announcing isFinished reads the property back on the announcing thread.
            #expect(
                operation.readsDuringProbe == 0,
                """
                The second finish(with:) announced isFinished again (\(operation.readsDuringProbe) read-back(s)), \
                although nothing changed. Announce only real changes.
                \(lesson.see("Finish when the work ends, once"))
                """)
        #endif
    }
}
