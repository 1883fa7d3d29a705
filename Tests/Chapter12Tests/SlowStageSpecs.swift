import Chapter12
import Foundation
import KataTestSupport
import Testing

extension Chapter12Specs {
    /// Specs that hold a decode or a resize, which blocks a thread: they run one at a time, so that
    /// they never hold more than one of the few threads the whole test process shares.
    @Suite("Slow stages", .serialized)
    struct SlowStageSpecs {
        // Look at the width each blocking stage's queue gets in `ImagePipeline.init`. Lesson: "A
        // width per stage".
        // Covers: C86
        // Paths: values
        @Test(
            "decodes and resizes each keep to their own width, also when the two widths differ",
            arguments: [Stage.decode, .resize])
        func blockingStagesStayWithinTheirOwnWidth(_ stage: Stage) async {
            // The held stage is the wider one, so a queue given the other stage's width shows.
            let widths =
                stage == .decode
                ? StageWidths(fetches: 4, decodes: 2, resizes: 1) : StageWidths(fetches: 4, decodes: 1, resizes: 2)
            let width = stage == .decode ? widths.decodes : widths.resizes
            let studio = Studio(holding: [stage], widths: widths)
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
            let images = ["a", "b", "c", "d"]
            for (row, image) in images.enumerated() { await list.show(image, in: row) }
            let hint = lesson.see("A width per stage")
            let tooMany = { () -> String? in
                if studio.peak(stage) > width {
                    return
                        "\(studio.peak(stage)) \(stage)s ran at once (\(studio.began(stage).joined(separator: ", ")) began)"
                }
                // Held stages end only when the spec lets them go: all ended means none was held.
                guard studio.began(stage).count == images.count, studio.running(stage).isEmpty else { return nil }
                let place =
                    studio.calledInATask(stage)
                    ? "called from a Swift task, not from an operation on a queue of the \(stage) width"
                    : "one at a time"
                return "every row's \(stage) ran and ended, \(place), before \(width) ran at once"
            }
            guard
                await waitUntil(
                    "\(width) \(stage)s to run at once (decode width \(widths.decodes), resize width \(widths.resizes))",
                    hint: (studio.running(stage).isEmpty && studio.began(stage).count == images.count
                        ? "" : "Only \(studio.running(stage).count) ran while more rows waited for their \(stage). ")
                        + hint,
                    givingUpWhen: {
                        tooMany()
                            ?? (list.deliveries.count == images.count
                                ? "every row was answered first (\(list.deliveries.timeline))" : nil)
                    },
                    { studio.running(stage).count == width })
            else { return }
            let extra = await comesTrue(within: window) { studio.peak(stage) > width }
            #expect(
                !extra,
                """
                With a \(stage) width of \(width) (decode width \(widths.decodes), resize width \
                \(widths.resizes)), \(studio.peak(stage)) \(stage)s ran at once. \(hint)
                """)
            studio.releaseAll()
            await waitUntil("every row to get its thumbnail", hint: hint) { list.deliveries.count == images.count }
        }

        // Look at what bounds the decodes and the resizes in `ImagePipeline`, and at whether a row
        // keeps an earlier stage's slot while it waits for the next. Lesson: "A width per stage".
        // Covers: C86, C85, C53
        @Test(
            "decodes and resizes keep to their widths, and a slow one holds up no earlier stage",
            arguments: [Stage.decode, .resize])
        func slowStagesStayWithinTheirWidth(_ stage: Stage) async {
            let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
            let studio = Studio(holding: [stage], widths: widths)
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
            await list.show("a", in: 0)
            await list.show("b", in: 1)
            let hint = lesson.see("A width per stage")
            let tooMany = { () -> String? in
                if studio.peak(stage) > 1 {
                    return
                        "\(studio.peak(stage)) \(stage)s ran at once (\(studio.began(stage).joined(separator: ", ")) began)"
                }
                // The studio holds a's stage until the spec lets it go, unless nothing could hold it.
                guard studio.saw("a \(stage) ended") else { return nil }
                return studio.calledInATask(stage)
                    ? "a's \(stage) was called from a Swift task, not from an operation on a queue of the \(stage) width, and ended at once"
                    : "a's \(stage) ended before the spec let it go"
            }
            guard
                await waitUntil(
                    "the \(stage) of a to begin", hint: hint, givingUpWhen: { tooMany() ?? list.wasAnswered(0) },
                    { studio.saw("a \(stage) began") })
            else { return }
            let before = stage.previous!
            guard
                await waitUntil(
                    "b's \(before) to run and end while a's \(stage) is still under way", timeout: patience,
                    hint: """
                        Each stage has its own width: a row waiting in, or running, its \(stage) holds no \
                        \(before) slot. The studio saw \(studio.events.timeline). \(hint)
                        """,
                    givingUpWhen: tooMany, { studio.saw("b \(before) ended") })
            else { return }
            let aEnded = studio.saw("a \(stage) ended")
            #expect(
                !aEnded,
                """
                Expected a's \(stage), held by the studio, to be still under way when b's \(before) \
                ended, but \(tooMany() ?? "it had ended"): the studio saw \(studio.events.timeline). A \
                blocking stage runs in an operation on its own queue, whose width bounds it.
                \(hint)
                """)
            guard !aEnded else { return }
            let extra = await comesTrue(within: window) { studio.peak(stage) > 1 }
            #expect(
                !extra,
                """
                With a \(stage) width of 1, \(studio.peak(stage)) \(stage)s ran at once: \
                \(studio.began(stage).joined(separator: ", ")) began while a's was under way.
                \(hint)
                """)
            studio.releaseAll()
            await waitUntil("both rows to get their thumbnails", hint: hint) { list.deliveries.count == 2 }
            for each in Stage.allCases {
                #expect(
                    studio.peak(each) <= 1,
                    "With every width 1, \(studio.peak(each)) \(each)s ran at once. \(hint)")
            }
        }

        // Look at what `ImagePipeline.rowLeftScreen(_:)` stops, and at what runs once a decode that
        // was under way ends. Lesson: "Leaving the screen".
        // Covers: C89, C93, C50
        // Paths: memory
        @Test("a row that leaves the screen while it decodes is never resized, gets nothing, and frees its bitmap")
        func rowLeavingWhileDecodingGetsNothing() async {
            let studio = Studio(holding: [.decode])
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
            await list.show("a", in: 0)
            guard
                await waitUntil(
                    "the decode of a to begin", givingUpWhen: { list.wasAnswered(0) }, { studio.saw("a decode began") })
            else { return }
            await list.scrollAway(0)
            studio.release("a")
            let hint = lesson.see("Leaving the screen")
            guard await waitUntil("the decode of a to end", hint: hint, { studio.saw("a decode ended") }) else {
                return
            }
            let resized = await comesTrue(within: window * 2) {
                studio.saw("a resize began") || list.deliveries.count > 0
            }
            await MainQueue.drain()
            #expect(
                !resized && list.deliveries.count == 0,
                """
                Row 0 left the screen while a was decoding; expected no resize and no delivery, but the \
                studio saw \(studio.events.timeline) and the list got \(list.deliveries.all.isEmpty ? "nothing" : list.deliveries.timeline). \
                A running stage cannot be interrupted, but what comes after it must not run.
                \(hint)
                """)
            let freed = await comesTrue(within: patience) {
                studio.bitmapsInMemory.isEmpty && list.cellsInMemory.isEmpty && studio.operationsInMemory.isEmpty
            }
            #expect(
                freed,
                """
                Row 0 left the screen and its decode ended, yet \(patience.seconds) s later these were \
                still in memory: \(studio.bitmapsInMemory + list.cellsInMemory + studio.operationsInMemory).
                \(lesson.see("Nothing kept"))
                """)
        }

        // Look at what `ImagePipeline.rowLeftScreen(_:)` does to a stage that waits in its queue,
        // not only to a fetch. Lesson: "Leaving the screen".
        // Covers: C89, C50, C93
        // Paths: memory, interference
        @Test(
            "a row that leaves the screen while its decode or resize waits never runs it, and leaves nothing in memory",
            arguments: [Stage.decode, .resize])
        func rowLeavingWhileItsStageWaitsRunsNothing(_ stage: Stage) async {
            let widths = StageWidths(fetches: 1, decodes: 1, resizes: 1)
            let studio = Studio(holding: [stage], widths: widths)
            defer { studio.releaseAll() }
            let pipeline = ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths)
            let list = ListView(pipeline)
            await list.show("a", in: 0)
            guard
                await waitUntil(
                    "the \(stage) of a to begin", givingUpWhen: { list.wasAnswered(0) },
                    { studio.saw("a \(stage) began") })
            else { return }
            await list.show("b", in: 1)
            let before = stage.previous!
            guard await waitUntil("b's \(before) to end", { studio.saw("b \(before) ended") }) else { return }
            await waitUntil(1, rowsWaitFor: stage, in: studio)
            await list.scrollAway(1)
            studio.release("a")
            let hint = lesson.see("Leaving the screen")
            guard await waitUntil("row 0 to get its thumbnail", hint: hint, { list.deliveries(to: 0).count == 1 })
            else {
                return
            }
            let ran = await comesTrue(within: window) { studio.saw("b \(stage) began") }
            await MainQueue.drain()
            #expect(
                !ran && list.deliveries(to: 1).isEmpty,
                """
                Row 1 left the screen while its \(stage) waited for the slot a's \(stage) held; expected \
                that \(stage) never to run and the row to get nothing, but the studio saw \
                \(studio.events.timeline) and the list got \(list.deliveries.timeline). Every waiting \
                stage of a row that left is cancelled, not only its fetch.
                \(hint)
                """)
            let freed = await comesTrue(within: patience) {
                studio.operationsInMemory.isEmpty && studio.bitmapsInMemory.isEmpty && list.cellsInMemory.isEmpty
            }
            #expect(
                freed,
                """
                Row 0 got its thumbnail and row 1 left the screen, yet \(patience.seconds) s later these \
                were still in memory: \(studio.operationsInMemory + studio.bitmapsInMemory + list.cellsInMemory).
                \(lesson.see("Nothing kept"))
                """)
            withExtendedLifetime(pipeline) {}
        }

        /// How the row on screen in `visibleRowsGoFirstAtEveryStage` came to be on screen.
        enum OnScreen: String, Sendable, CaseIterable, CustomStringConvertible {
            case fromTheStart = "asked for on screen"
            case scrolledInWhileFetching = "prefetched, then scrolled into view while its fetch ran"
            case scrolledInWhileWaiting = "prefetched, then scrolled into view while it waited for the stage"

            var description: String { rawValue }
        }

        // Look at the priority `ImagePipeline` gives a row's decode and resize, not only its fetch,
        // and at what `rowBecameVisible(_:)` does to a stage that already waits in its queue and
        // remembers for the stages a row has not reached yet. Lesson: "Visible rows first" and
        // Chapter 6.
        // Covers: C87, C43, C48, C93
        // Paths: values, memory
        @Test(
            "when rows wait for a decode or a resize, a row on screen starts before rows being prefetched, also one that scrolled into view while it downloaded or waited, and nothing stays once all are answered",
            .preflightScrolling,
            arguments: [Stage.decode, .resize], OnScreen.allCases)
        func visibleRowsGoFirstAtEveryStage(_ stage: Stage, _ onScreen: OnScreen) async {
            let widths = StageWidths(fetches: 3, decodes: 1, resizes: 1)
            let scrolledIn = onScreen == .scrolledInWhileFetching
            let studio = Studio(holding: [stage], holdingFetchesOf: scrolledIn ? ["now"] : [], widths: widths)
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
            await list.show("first", in: 0)
            guard
                await waitUntil(
                    "the \(stage) of row 0 to begin", givingUpWhen: { list.wasAnswered(0) },
                    { studio.saw("first \(stage) began") })
            else {
                return
            }
            let before = stage.previous!
            // The prefetched rows reach the stage first, so that a queue that ignores priority starts them first.
            for (waiting, (row, image)) in [(5, "soon1"), (6, "soon2"), (1, "now")].enumerated() {
                await list.show(image, in: row, visible: image == "now" && onScreen == .fromTheStart)
                if image == "now" && scrolledIn {
                    guard await waitUntil("now's fetch to begin", { studio.saw("now fetch began") }) else { return }
                    // On screen before its decode and resize exist: whatever queues them must know.
                    await list.scrollIntoView(1)
                    studio.release("now")
                }
                guard await waitUntil("\(image)'s \(before) to end", { studio.saw("\(image) \(before) ended") }) else {
                    return
                }
                await waitUntil(waiting + 1, rowsWaitFor: stage, in: studio)
                if image == "now" && onScreen == .scrolledInWhileWaiting {
                    // Its stage waits in its queue, queued as a prefetched row's.
                    let queued = studio.waiting(stage)
                    await list.scrollIntoView(1)
                    // A design that queues a replacement shows one more waiting operation.
                    await waitUntil(waiting + 2, rowsWaitFor: stage, in: studio)
                    let changed = queued.filter { ($0.operation.value?.queuePriority ?? $0.priority) != $0.priority }
                    #expect(
                        changed.isEmpty,
                        """
                        Row 1 scrolled into view while its \(stage) waited in its queue; expected the \
                        operations already waiting there to keep the priority they were queued with, but \
                        \(changed.count) of \(queued.count) changed it after joining the queue. Apple documents \
                        no promise that a queue notices a priority changed after adding (Linux happens to \
                        re-sort): queue a replacement at the new priority instead.
                        \(lesson.see("Visible rows first"))
                        """)
                }
            }
            studio.release("first")
            let hint = lesson.see("Visible rows first")
            guard
                await waitUntil(
                    "another \(stage) to begin once row 0's ended", hint: hint, { studio.began(stage).count >= 2 })
            else { return }
            let next = studio.began(stage)[1]
            let (row1, however) =
                switch onScreen {
                case .fromTheStart: ("row 1 was on screen", "")
                case .scrolledInWhileFetching:
                    (
                        "row 1, prefetched too, scrolled into view while its fetch ran",
                        " A row that scrolled into view is on screen for every stage it has not reached yet."
                    )
                case .scrolledInWhileWaiting:
                    (
                        "row 1, prefetched too, scrolled into view while its \(stage) waited",
                        """
                         A row that scrolls into view goes first at the stage it already waits for too: \
                        its waiting operation was queued at a prefetched row's priority, so replace it with one \
                        queued at the new priority.
                        """
                    )
                }
            #expect(
                next == "now",
                """
                Rows 5 and 6 were being prefetched and \(row1); all three waited for the \(stage) \
                slot. Expected row 1's \(stage) (now) to begin next, but \(next)'s did. A row on screen \
                goes first at every stage, not only for its fetch.\(however)
                \(hint)
                """)
            // Memory is judged once every row is answered, while the list still holds the pipeline.
            studio.releaseAll()
            guard
                await waitUntil(
                    "rows 0, 1, 5 and 6 to get their thumbnails", timeout: patience, hint: hint,
                    { list.deliveries.count == 4 })
            else { return }
            await MainQueue.drain()
            // The thumbnails themselves the list keeps; what the pipeline took to make them it does not.
            let leftOver = {
                studio.operationsInMemory + studio.bitmapsInMemory.filter { !$0.hasSuffix("'s thumbnail") }
            }
            let freed = await comesTrue(within: patience) { leftOver().isEmpty }
            #expect(
                freed,
                """
                Rows 0, 1, 5 and 6 got their thumbnails (\(row1)) and the list still shows them, yet \
                \(patience.seconds) s later these were still in memory: \(leftOver()). \
                A stage that a raise replaced is let go once its queue has retired it, like any other \
                stage, and so is the work the raise moved from it (a waiting resize's work holds the \
                full-size bitmap): a list or table of replaced stages, or of their work, that lives as \
                long as the pipeline grows with every scroll.
                \(lesson.see("Nothing kept"))
                """)
            withExtendedLifetime(list) {}
        }

        // Look at what `rowBecameVisible(_:)` does to a stage that has already begun: only a stage
        // that still waits is replaced, and a running one keeps its work. Lesson: "Visible rows first".
        // Covers: C87, C86
        // Paths: values, reuse
        @Test(
            "a prefetched row that scrolls into view while its fetch, decode or resize runs has that stage run once, never started over",
            .preflightScrolling,
            arguments: Stage.allCases)
        func raiseLeavesARunningStageAlone(_ stage: Stage) async {
            let widths = StageWidths(fetches: 2, decodes: 2, resizes: 2)
            let studio = Studio(holding: [stage], widths: widths)
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
            await list.show("a", in: 0, visible: false)
            guard
                await waitUntil(
                    "the \(stage) of a to begin", givingUpWhen: { list.wasAnswered(0) },
                    { studio.saw("a \(stage) began") })
            else { return }
            await list.scrollIntoView(0)
            // A second run of the stage would begin now, in the free slot beside the held one.
            _ = await comesTrue(within: window) { studio.began(stage).count > 1 }
            studio.release("a")
            let hint = lesson.see("Visible rows first")
            guard
                await waitUntil(
                    "row 0 to get its thumbnail", timeout: patience, hint: hint, { !list.deliveries(to: 0).isEmpty })
            else { return }
            await MainQueue.drain()
            let runs = studio.began(stage)
            let stopped = studio.saw("a \(stage) cancelled")
            let got = list.deliveries(to: 0).map(\.description)
            let expected = ["row 0 (request 1) got \(ListView.thumbnail(of: "a"))"]
            #expect(
                got == expected,
                """
                Row 0, prefetched, scrolled into view while its \(stage) ran; expected its thumbnail once, \
                on the main queue: \(expected.joined()). It got \(got.joined(separator: "; ")).
                \(lesson.see("Exactly once"))
                """)
            #expect(
                runs == ["a"] && !stopped,
                """
                Row 0, prefetched, scrolled into view while its \(stage) ran. Expected that \(stage) to \
                begin once and go on to its end; the studio saw \(studio.events.timeline). A stage that \
                has begun is left alone: a running decode or resize cannot be stopped, so queueing its \
                work again runs it twice, and a download cancelled and started over takes a second slot \
                and starts from nothing. A raise replaces only a stage that still waits, and raises the \
                stages the row has not reached yet.
                \(hint)
                """)
            withExtendedLifetime(list) {}
        }

        // Look at where `ImagePipeline` decides that a row still wants its result: on the stage's
        // thread, or on the main queue where the list view says a row left? Lesson: "Exactly once".
        // Covers: C89, C91, C90
        @Test("a row that leaves the screen while its thumbnail is on its way to the main queue gets nothing")
        func rowLeavingWhileItsResultIsOnItsWayGetsNothing() async {
            let studio = Studio(holding: [.resize])
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
            await list.show("a", in: 0)
            guard
                await waitUntil(
                    "the resize of a to begin", givingUpWhen: { list.wasAnswered(0) }, { studio.saw("a resize began") })
            else { return }
            // The main queue is kept busy: the thumbnail waits behind the list view's call.
            let gate = Gate("the list view's turn of the main queue")
            list.scrollAway(0, once: gate)
            studio.release("a")
            guard await waitUntil("the resize of a to end", { studio.saw("a resize ended") }) else {
                gate.open()
                return
            }
            await resultOnItsWayToTheMainQueue()
            gate.open()
            await MainQueue.drain()
            _ = await comesTrue(within: window) { !list.deliveries(to: 0).isEmpty }
            #expect(
                list.deliveries(to: 0).isEmpty,
                """
                Row 0 left the screen in the same turn of the main queue as its thumbnail arrived there, \
                after the resize had ended; expected it to get nothing, but it got \
                \(list.deliveries.timeline). Whether the row still wants the result is decided on the \
                main queue, just before calling it, not on the stage's thread.
                \(lesson.see("Exactly once"))
                """)
        }

        // Look at how `ImagePipeline` tells a row's newest request from an older one whose result
        // is already on its way to the main queue. Lesson: "Exactly once" and Chapter 1.
        // Covers: C92, C91
        // Paths: interference
        @Test("a row asked again while its old thumbnail is on its way to the main queue gets only the new one")
        func newerRequestWinsOverAResultOnItsWay() async {
            let studio = Studio(holding: [.resize])
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio))
            await list.show("old", in: 0)
            guard
                await waitUntil(
                    "the resize of old to begin", givingUpWhen: { list.wasAnswered(0) },
                    { studio.saw("old resize began") })
            else { return }
            // The cell is reused in the same turn of the main queue as old's thumbnail arrives there.
            let gate = Gate("the list view's turn of the main queue")
            list.show("new", in: 0, once: gate)
            studio.release("old")
            guard await waitUntil("the resize of old to end", { studio.saw("old resize ended") }) else {
                gate.open()
                return
            }
            await resultOnItsWayToTheMainQueue()
            gate.open()
            studio.release("new")
            let hint = lesson.see("Exactly once")
            guard
                await waitUntil(
                    "row 0's second request to be answered", hint: hint,
                    { list.deliveries(to: 0).contains { $0.request == 2 } })
            else { return }
            _ = await comesTrue(within: window) { list.deliveries(to: 0).count > 1 }
            await MainQueue.drain()
            let got = list.deliveries(to: 0)
            #expect(
                got.map(\.description) == ["row 0 (request 2) got \(ListView.thumbnail(of: "new"))"],
                """
                Row 0 asked for old; old's thumbnail was on its way to the main queue when the row, \
                reused, asked for new. Expected only the second request's callback, once, with new's \
                thumbnail; the list got \(got.map(\.description).joined(separator: "; ")). A result \
                belongs to the request that asked for it, not to whatever the row shows now.
                \(hint)
                """)
        }
    }
}
