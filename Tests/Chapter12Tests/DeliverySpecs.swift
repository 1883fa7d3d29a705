import Chapter12
import Foundation
import KataTestSupport
import Testing

/// A callback that calls the pipeline again, run in a child process.
///
/// A pipeline that calls the callback while it holds its own lock deadlocks the main queue when
/// the callback calls back in, and with it every spec that needs the main queue; so the child
/// runs the scenario, waits a bounded time for each step, and exits with a failure that says
/// what it saw. It returns normally when all went well.
enum CallbackScenario {
    /// Row 0's callback, once it showed beach, asks for forest in row 1, as a list view that
    /// loads the next row when one is shown does.
    static func callbackAsksForAnotherRow() async {
        let name = "callbackAsksForAnotherRow"
        exitIfStillRunning(after: patience * 6, status: EXIT_FAILURE)
        let studio = Studio()
        let pipeline = ImagePipeline(fetcher: studio, decoder: studio, resizer: studio)
        let seen = Recorder<String>()
        @Sendable func got(_ row: Int, _ result: Result<Bitmap, any Error>) -> String {
            let outcome =
                switch result {
                case .success(let bitmap): "\(bitmap.name)'s thumbnail"
                case .failure(let error): "the error “\(error)”"
                }
            return "row \(row) got \(outcome)\(MainQueue.isCurrent ? "" : ", off the main queue")"
        }
        DispatchQueue.main.async {
            pipeline.request(row: 0, url: address("beach"), visible: true) { result in
                seen.record(got(0, result))
                pipeline.request(row: 1, url: address("forest"), visible: true) { result in
                    seen.record(got(1, result))
                }
                seen.record("row 0's callback returned")
            }
        }
        guard await comesTrue(within: patience, { seen.contains { $0.hasPrefix("row 0 got") } }) else {
            LastWords.fail(
                name,
                """
                Row 0 (beach) never got an answer (waited \(patience.seconds) s); the studio saw \
                \(studio.events.timeline).
                """)
        }
        guard await comesTrue(within: patience, { seen.contains("row 0's callback returned") }) else {
            LastWords.fail(
                name,
                """
                Row 0's callback, on the main queue, asked the pipeline for row 1's image (forest), \
                and that call never returned (waited \(patience.seconds) s): the main queue, and \
                the list view with it, is stuck for good. Most likely the pipeline called the \
                callback while it held its own lock, and request(row:url:visible:deliver:) waited \
                for that lock: an NSLock locked again by the thread that holds it never returns. \
                Release the lock before calling the callback.
                """)
        }
        guard await comesTrue(within: patience, { seen.contains { $0.hasPrefix("row 1 got") } }) else {
            LastWords.fail(
                name,
                """
                Row 0's callback asked for row 1's image (forest), and row 1 never got an answer \
                (waited \(patience.seconds) s): the list got \(seen.timeline); the studio saw \
                \(studio.events.timeline).
                """)
        }
        _ = await comesTrue(within: window) { seen.count > 3 }
        let expected = ["row 0 got beach's thumbnail", "row 0's callback returned", "row 1 got forest's thumbnail"]
        guard seen.all == expected else {
            LastWords.fail(
                name,
                """
                Expected \(expected.joined(separator: " → ")), each on the main queue, but the list \
                got \(seen.timeline).
                """)
        }
        withExtendedLifetime(pipeline) {}
    }
}

extension Chapter12Specs {
    @Suite("Every row on screen gets its own thumbnail, once, on the main queue")
    struct DeliverySpecs {
        // Follow one row through `ImagePipeline`: where does each stage start, and on which queue is
        // the callback called? Lesson: "Stages in order" and "Results on the main queue".
        // Covers: C85, C90, C91, C35, C40, C1
        @Test("three rows on screen each get their thumbnail, built fetch → decode → resize, on the main queue")
        func visibleRowsGetTheirThumbnails() async {
            let studio = Studio()
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
            let images = ["beach", "forest", "harbor"]
            for (row, image) in images.enumerated() { await list.show(image, in: row) }
            guard
                await waitUntil(
                    "a thumbnail for each of the three rows", hint: lesson.see("Stages in order"),
                    { Set(list.deliveries.all.map(\.row)).count == 3 })
            else { return }
            await MainQueue.drain()
            for (row, image) in images.enumerated() {
                let stages = studio.events.all.filter { $0.hasPrefix("\(image) ") }
                let expected = Stage.allCases.flatMap { ["\(image) \($0) began", "\(image) \($0) ended"] }
                #expect(
                    stages == expected,
                    """
                    Expected row \(row)'s stages one after the other, each beginning once the one before \
                    it has ended: \(expected.joined(separator: " → ")). The studio saw \
                    \(stages.joined(separator: " → ")).
                    \(lesson.see("Stages in order"))
                    """)
                let got = list.deliveries(to: row)
                #expect(
                    got.map(\.outcome) == [ListView.thumbnail(of: image)],
                    """
                    Expected row \(row)'s callback to be called once, with \(ListView.thumbnail(of: image)); \
                    it got \(got.isEmpty ? "nothing" : got.map(\.outcome).joined(separator: ", then ")).
                    \(lesson.see("Exactly once"))
                    """)
                let offMain = got.filter { !$0.onMainQueue }
                #expect(
                    offMain.isEmpty,
                    """
                    Row \(row)'s callback was called off the main queue. The list view touches its \
                    cells there and nowhere else: every delivery hops to the main queue.
                    \(lesson.see("Results on the main queue"))
                    """)
            }
        }

        // Look at what `ImagePipeline` keys its requests by, and what it does when a second row
        // asks for an image a first row is still waiting for. Lesson: "Exactly once".
        // Covers: C91
        // Paths: interference
        @Test("two rows that show the same image at once each get its thumbnail, once, on the main queue")
        func sameImageInTwoRows() async {
            let studio = Studio(holding: [.fetch])
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
            // A feed that shows one photo twice: both rows wait for it at the same time.
            await list.show("beach", in: 0)
            await list.show("beach", in: 1)
            guard await waitUntil("the fetch of beach to begin", { studio.saw("beach fetch began") }) else { return }
            studio.release("beach")
            let hint = lesson.see("Exactly once")
            guard
                await waitUntil(
                    "rows 0 and 1 to get beach's thumbnail", timeout: patience,
                    hint: """
                        The list got \(list.deliveries.timeline); the studio saw \(studio.events.timeline). \
                        A pipeline that keeps its requests by image lets the second row's request \
                        replace the first row's. \(hint)
                        """,
                    { !list.deliveries(to: 0).isEmpty && !list.deliveries(to: 1).isEmpty })
            else { return }
            _ = await comesTrue(within: window) { list.deliveries.count > 2 }
            await MainQueue.drain()
            for row in [0, 1] {
                let got = list.deliveries(to: row)
                #expect(
                    got.map(\.description) == ["row \(row) (request 1) got \(ListView.thumbnail(of: "beach"))"],
                    """
                    Rows 0 and 1 both showed beach; expected row \(row)'s callback once, on the main \
                    queue, with beach's thumbnail, but it got \
                    \(got.isEmpty ? "nothing" : got.map(\.description).joined(separator: "; ")). Each \
                    request is its own, even when another row asks for the same image.
                    \(hint)
                    """)
            }
        }

        // Look at what `ImagePipeline` still holds when it calls a row's callback: the list view's
        // code may call the pipeline again from there. Lesson: "Results on the main queue".
        // Covers: C91, C90
        @Test("a callback that asks the pipeline for another row's image returns, and that row gets its thumbnail too")
        func callbackMayCallThePipelineAgain() async {
            LastWords.forget("callbackAsksForAnotherRow")
            let outcome = await #expect(
                processExitsWith: .success,
                """
                Row 0's callback, on the main queue, asked the pipeline for row 1's image: expected \
                the call to return, and each row to get its thumbnail once, on the main queue.
                \(lesson.see("Results on the main queue"))
                """
            ) {
                await CallbackScenario.callbackAsksForAnotherRow()
            }
            LastWords.explain("callbackAsksForAnotherRow", outcome)
        }

        /// Says what was seen when row 1 heard nothing of its error: where the error went, if anywhere.
        private static func nothingForRow1(studio: Studio, list: ListView, failed: StudioError) -> String {
            let seen = "The studio saw \(studio.events.timeline); the list got \(list.deliveries.timeline)."
            let row0 = list.deliveries(to: 0).map(\.outcome)
            let cause =
                if row0.contains(where: { $0.contains("\(failed)") }) {
                    "Forest's error reached row 0's callback instead of row 1's: each request answers its own row."
                } else if row0.isEmpty {
                    "Neither row got anything, so more than the error is stuck: look at the timeline first."
                } else {
                    "Row 0 got its thumbnail, and row 1 nothing: the error was swallowed, so the row would show a spinner for ever."
                }
            return "\(seen) \(cause) \(lesson.see("Errors end the row"))"
        }

        // Look at what `ImagePipeline` does when a stage throws: who hears of it, on which queue,
        // does the next stage still run, and what is left of the row once it heard? Lesson:
        // "Errors end the row".
        // Covers: C88, C90, C91, C16, C93
        // Paths: interference, memory, reuse
        @Test(
            "a stage that fails reaches the row's callback once, on the main queue, skips the later stages, leaves nothing behind, and a retry starts afresh",
            arguments: [Stage.fetch, .decode, .resize])
        func failureReachesTheCallerOnce(_ stage: Stage) async {
            let studio = Studio(failing: ["forest": stage])
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
            await list.show("beach", in: 0)
            await list.show("forest", in: 1)
            let failed = StudioError(stage: stage, image: "forest")
            guard
                await waitUntil(
                    "row 1 (forest) to hear that \(failed)", timeout: patience,
                    hint: Self.nothingForRow1(studio: studio, list: list, failed: failed),
                    { !list.deliveries(to: 1).isEmpty })
            else { return }
            await waitUntil("row 0 (beach) to get its thumbnail as well") { !list.deliveries(to: 0).isEmpty }
            await MainQueue.drain()
            let got = list.deliveries(to: 1)
            let answeredOnce = got.map(\.outcome) == ["the error “\(failed)”"]
            #expect(
                answeredOnce,
                """
                Expected row 1's callback to be called once, with the error “\(failed)”; it got \
                \(got.map(\.outcome).joined(separator: ", then ")).
                \(lesson.see("Errors end the row"))
                """)
            let offMain = got.filter { !$0.onMainQueue }
            #expect(
                offMain.isEmpty,
                "Row 1's error was delivered off the main queue. \(lesson.see("Results on the main queue"))")
            let later = Stage.allCases.drop(while: { $0 != stage }).dropFirst().filter {
                studio.saw("forest \($0) began")
            }
            #expect(
                later.isEmpty,
                """
                The \(stage) of forest failed, yet its \(later.map(\.description).joined(separator: " and ")) \
                still began: a stage runs only on the output of the one before.
                \(lesson.see("Errors end the row"))
                """)
            #expect(
                list.deliveries(to: 0).map(\.outcome) == [ListView.thumbnail(of: "beach")],
                "Row 0 (beach) should be untouched by forest's failure; it got \(list.deliveries(to: 0)).")
            // What is kept, and the retry, are judged once the error was answered right.
            guard answeredOnce else { return }
            let freed = await comesTrue(within: patience) {
                list.cellsInMemory.isEmpty && studio.bitmapsInMemory.isEmpty && studio.operationsInMemory.isEmpty
            }
            #expect(
                freed,
                """
                Row 0 got its thumbnail and row 1 its error, yet \(patience.seconds) s later these were \
                still in memory: \(list.cellsInMemory + studio.bitmapsInMemory + studio.operationsInMemory). \
                An error ends its request as a thumbnail does: the pipeline forgets the request \
                whichever way it was answered.
                \(lesson.see("Nothing kept"))
                """)
            // The list view asks for forest again (a retry), and this time every stage succeeds.
            studio.heal("forest")
            await list.show("forest", in: 1)
            let hint = lesson.see("Errors end the row")
            guard
                await waitUntil(
                    "row 1, asked for forest again after the error, to get an answer", timeout: patience,
                    hint: """
                        The retry got nothing: the studio saw \(studio.events.timeline). Whatever the \
                        pipeline kept of the failed request stood in the new one's way. \(hint)
                        """,
                    { list.deliveries(to: 1).count > 1 })
            else { return }
            _ = await comesTrue(within: window) { list.deliveries(to: 1).count > 2 }
            await MainQueue.drain()
            let retried = list.deliveries(to: 1).dropFirst().map(\.outcome)
            #expect(
                retried == [ListView.thumbnail(of: "forest")],
                """
                Row 1 asked for forest again after its \(stage) failed, and this time nothing failed; \
                expected its second callback once, with \(ListView.thumbnail(of: "forest")), but it \
                got \(retried.joined(separator: ", then ")). An error ends its own request; a new \
                request starts afresh, as the first did.
                \(hint)
                """)
        }
    }
}
