import Chapter8
import Foundation
import KataTestSupport
import Testing

@Suite("The result, or the error, is there the moment the operation is finished", .watched)
struct PublishingTheResult {
    // Look at finish(with:) and the lesson's "Publish the result, then announce": what can a
    // dependent or a completion block read at the moment it hears that the operation finished?
    // Covers: C22, C61
    // Paths: collaborators
    @Test("the thumbnail is readable from every read that sees isFinished true, and from dependents", .preflight)
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
        let problems = operation.inconsistentReads
        #expect(
            problems.isEmpty,
            """
            Reads of isFinished caught the operation half-finished: \(problems.joined(separator: "; ")). \
            Store the result and flip both flags in one critical section, then announce.
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

    // Look at how the Task handles what the loader throws, and the lesson's "Publish the result,
    // then announce": where does the error go, whichever step threw it, and does anything outside
    // the operation remember it for the next operation of the same picture?
    // Covers: C61
    // Paths: values, reuse
    @Test(
        "when the fetch or the resize throws, the operation finishes and its result is that error", .preflight,
        arguments: ["fetch", "resize"])
    func errorIsPublished(step: String) async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        if step == "resize" {
            loader.resume("fetch a")
            guard
                await waitUntil(
                    "the resize of a to begin after its fetch returned",
                    hint: loader.trace.lifecycle(missing: "resize never began") + "\n" + lesson.see("Steps"),
                    { loader.isWaiting("resize a") })
            else { return }
        }
        loader.fail("\(step) a", with: LoaderError.missing("a"))
        guard
            await waitUntil(
                "the operation whose \(step) threw to finish and its dependent to run",
                hint: loader.trace.lifecycle(missing: "it never finished, or the dependent never ran") + "\n"
                    + "A failure ends the work too, in either step: it must finish the operation.\n"
                    + lesson.see("Finish when the work ends, once"),
                { operation.isFinished && loader.trace.contains { $0.hasPrefix("sentinel ran") } })
        else { return }
        let result = operation.result
        var thrown: LoaderError?
        if case .failure(let error)? = result { thrown = error as? LoaderError }
        #expect(
            thrown == .missing("a"),
            """
            After the \(step) threw LoaderError.missing("a"), the result is \(describe(result)); expected \
            that error. \(loader.trace.lifecycle(missing: "…"))
            \(lesson.see("Publish the result, then announce"))
            """)

        // The error belongs to the operation that met it: a later one of the same picture starts afresh.
        let retryLoader = ScriptedLoader()
        retryLoader.releaseAll()
        let retry = ThumbnailOperation(imageName: "a", width: thumbnailWidth, loader: retryLoader)
        defer { withExtendedLifetime(retry) {} }
        retry.start()
        guard
            await waitUntil(
                "a second operation of picture a, made after the first one's \(step) threw, to finish",
                hint: retryLoader.trace.lifecycle(missing: "it never finished") + "\n"
                    + lesson.see("Finish when the work ends, once"),
                { retry.isFinished })
        else { return }
        let retried = retry.result
        #expect(
            (try? retried?.get()) == Thumbnail(name: "a", width: thumbnailWidth),
            """
            After the \(step) of one operation of picture a threw, a second operation of the same picture, \
            with a loader that throws nothing, ended with \(describe(retried))\
            \(retryLoader.trace.contains("fetch a began") ? "" : " without ever fetching"); expected \
            success(a, \(thumbnailWidth) px). An error belongs to the operation whose work threw it: \
            remembered outside it (a static set of failed pictures, a flag nothing resets), it fails \
            operations that never met it. \(retryLoader.trace.lifecycle(missing: "…"))
            \(lesson.see("Forward cancel() to the Task"))
            """)
    }

    // Look at the width the work passes to the loader's resize, and the lesson's "Steps": the
    // thumbnail is as wide as the operation was asked for, whatever that width is.
    // Covers: C61
    // Paths: values
    @Test(
        "the thumbnail is as wide as the operation was asked for, at any width", .preflight,
        arguments: [1, 63, 65, 101, 4096, 4097, 1 << 20, 1 << 31, 1 << 40])
    func resultHasTheWidthAskedFor(width: Int) async {
        let loader = ScriptedLoader()
        let operation = ThumbnailOperation(imageName: "a", width: width, loader: loader)
        defer { loader.endSpec(keepingAlive: operation) }

        loader.releaseAll()
        operation.start()
        guard
            await waitUntil(
                "the operation to finish once its fetch and resize returned",
                hint: loader.trace.lifecycle(missing: "it never finished") + "\n"
                    + lesson.see("Finish when the work ends, once"),
                { operation.isFinished })
        else { return }
        let result = operation.result
        #expect(
            (try? result?.get()) == Thumbnail(name: "a", width: width),
            """
            The operation was asked for a thumbnail \(width) px wide; its result is \(describe(result)). \
            The work must resize to the operation's own width, unchanged: not a fixed or capped number, \
            and not one squeezed through a narrower integer type.
            \(lesson.see("Steps"))
            """)
    }

    // Look at finish(with:) and the lesson's "Finish when the work ends, once": what does a
    // second call, or a late cancel(), do to the result, the flags and the operation's listeners?
    // Covers: C22, C24, C61
    // Paths: reuse
    @Test("finishing again after the work ended changes nothing a user can see", .preflightFinishingAgain)
    func finishingTwiceHasNoEffect() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let completions = Protected(0)
        operation.completionBlock = { completions.withValue { $0 += 1 } }
        let queue = makeQueue()
        #if canImport(Darwin)
            let announcements = Announcements(of: operation)
            defer { announcements.stop() }
        #endif
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        guard await letWorkEnd("a", loader) else { return }
        guard
            await waitUntil(
                "the operation to finish with its thumbnail, and its completion block to run",
                hint: loader.trace.lifecycle(missing: "never finished with a result") + "\n"
                    + lesson.see("Finish when the work ends, once"),
                { operation.isFinished && operation.result != nil && completions.value == 1 })
        else { return }

        operation.finish(with: .failure(LoaderError.missing("late")))
        operation.finish(with: .success(Thumbnail(name: "late", width: 1)))
        let result = operation.result
        #expect(
            (try? result?.get()) == Thumbnail(name: "a", width: thumbnailWidth),
            """
            A second finish(with:) replaced the result: it is now \(describe(result)). The first finish wins.
            \(lesson.see("Finish when the work ends, once"))
            """)
        // A cancel() that comes once it is over is one more late finish: it changes nothing either.
        operation.cancel()
        let afterCancel = operation.result
        #expect(
            (try? afterCancel?.get()) == Thumbnail(name: "a", width: thumbnailWidth),
            """
            cancel() on the operation that had already finished with its thumbnail replaced the result: \
            it is now \(describe(afterCancel)). A cancel() that finishes the operation itself must go \
            through the same once-only finish; once done, nothing changes the outcome.
            \(lesson.see("Finish when the work ends, once"))
            """)
        #expect(
            operation.isFinished && !operation.isExecuting,
            """
            After a second finish the operation reports isFinished \(operation.isFinished) and isExecuting \
            \(operation.isExecuting); expected true and false.
            \(lesson.see("Finish when the work ends, once"))
            """)
        await waitUntil(
            "the dependent to finish",
            hint: loader.trace.lifecycle(missing: "the dependent never finished") + "\n"
                + lesson.see("Finish when the work ends, once")
        ) { dependent.isFinished }
        let ran = (completions.value, loader.trace.all.filter { $0.hasPrefix("sentinel ran") }.count)
        #expect(
            ran == (1, 1),
            """
            After finishing twice, the completion block ran \(ran.0) time(s) and the dependent \(ran.1) \
            time(s); expected once each. \(lesson.see("Finish when the work ends, once"))
            """)
        let problems = operation.inconsistentReads
        #expect(
            problems.isEmpty,
            """
            Reads of isFinished caught a state that a finished operation must never show: \
            \(problems.joined(separator: "; ")). \(lesson.see("Finish when the work ends, once"))
            """)
        #if canImport(Darwin)
            // Only Darwin can count notifications; Linux judges them by their effects above.
            let (executing, finished) = (announcements.count("isExecuting"), announcements.count("isFinished"))
            #expect(
                executing.will == 2 && executing.did == 2 && finished.will == 1 && finished.did == 1,
                """
                Over its life the operation sent will/did isExecuting \(executing.will)/\(executing.did) \
                time(s) and will/did isFinished \(finished.will)/\(finished.did) time(s); expected 2/2 \
                (started, then done) and 1/1. Announce each real change once, under the keys \
                "isExecuting" and "isFinished". \(lesson.see("Finish when the work ends, once"))
                """)
        #endif
    }

    // Look at finish(with:) in ThumbnailOperation: is "has it finished yet?" asked in the same
    // critical section that publishes the outcome? See "Finish when the work ends, once".
    // Covers: C22
    // Paths: reuse
    @Test(
        "two finishes at the same moment, the second just after the first checked the state, publish one outcome once",
        .preflightFinishingAgain)
    func twoFinishesAtOnceFinishOnce() async {
        let loader = ScriptedLoader()
        let operation = TracedThumbnail("a", loader: loader)
        let dependent = sentinel(after: operation)
        let firstSeen = Protected<[String]>([])  // the result each run of the completion block saw
        operation.completionBlock = { [weak operation] in
            firstSeen.withValue { $0.append(describe(operation?.result)) }
        }
        let queue = makeQueue()
        defer { loader.endSpec(keepingAlive: queue, operation, dependent) }

        queue.enqueue([operation, dependent])
        guard await waitForLaunch(operation, loader) else { return }
        // A cancel that finishes at once racing the work's own end: both finish while it runs.
        let returned = Protected(0)
        operation.raceWindow.race(
            {
                operation.finish(with: .success(Thumbnail(name: "first", width: 1)))
                returned.withValue { $0 += 1 }
            },
            against: {
                operation.finish(with: .success(Thumbnail(name: "rival", width: 1)))
                returned.withValue { $0 += 1 }
            })
        let hint = lesson.see("Finish when the work ends, once")
        guard await waitUntil("both finish(with:) calls to return", hint: hint, { returned.value == 2 }) else {
            return
        }
        guard
            await waitUntil(
                "the dependent to finish",
                hint: loader.trace.lifecycle(missing: "the dependent never finished") + "\n" + hint,
                { dependent.isFinished })
        else { return }
        _ = await comesTrue(within: Bound.scaled(.milliseconds(50))) { firstSeen.value.count > 1 }
        let seen = firstSeen.value
        let first = operation.outcomeWhenFirstFinished ?? "nothing"
        let final = describe(operation.result)
        #expect(
            seen.count == 1 && first == final,
            """
            Two threads finished the running operation at the same moment, the second just after the \
            first had checked the state. When isFinished first read true the result was \(first); it \
            is now \(final), and the completion block ran \(seen.count) time(s). Expected a result \
            that never changes once isFinished is true, and one run: both calls saw "not finished \
            yet" before either had published. Check and publish in one critical section.
            \(hint)
            """)
        let ran = loader.trace.all.filter { $0.hasPrefix("sentinel ran") }.count
        #expect(ran == 1, "The dependent ran \(ran) time(s); expected once. \(hint)")
    }
}
