import Chapter10
import Foundation
import KataTestSupport
import Testing

/// Cancellation scenarios; each runs in a child process.
///
/// A continuation resumed twice stops the program, and one never resumed strands its task, so
/// no spec lets either happen in the test process. The child waits a bounded time for what
/// correct code does, then exits with a failure and says what it saw; it returns normally when
/// all went well.
enum CancellingScenario {
    /// Waits, suspending, until `condition` holds or the scenario's patience runs out.
    private static func within(_ condition: () -> Bool) async -> Bool {
        await comesTrue(within: patience, condition)
    }

    /// Gives the end of `operation` a short window to run before the scenario returns.
    ///
    /// The completion block may resume the caller a second time after the caller already
    /// returned; that stops the program, but only if the child is still running then. The
    /// window closes early once Foundation has let go of the operation, which it does after
    /// its completion block returned.
    private static func letItsEndRun(_ operation: () -> Operation?) async {
        _ = await comesTrue(within: Bound.scaled(.milliseconds(150))) { operation() == nil }
    }

    /// Fails `scenario` unless Foundation and the exporter let go of `operation` once `call`
    /// returned: a completion block that returns before clearing itself, or a list of the
    /// exporter's that this way of ending never clears, keeps the operation for good.
    private static func expectReleased(_ scenario: String, _ call: Call, _ how: String, _ operation: () -> Operation?)
        async
    {
        guard await within({ operation() == nil }) else {
            LastWords.fail(
                scenario,
                """
                export("\(call.name)") \(how) and \(call.described), yet \(patience.seconds) s later its \
                operation was still in memory. Something keeps it on this way of ending: most likely \
                a completion block that returns before it lets go of itself, or a list of the \
                exporter's that only a rendered result or the task's cancellation clears.
                """)
        }
    }

    /// Checks that `call` threw `CancellationError` and that nothing was rendered.
    private static func expectCancelled(_ scenario: String, _ call: Call, _ studio: Studio) async {
        guard await within({ call.isOver }) else {
            LastWords.fail(
                scenario,
                """
                export("\(call.name)") never returned (waited \(patience.seconds) s): its \
                operation finished cancelled, and nothing resumed the awaiting task. A cancelled \
                operation still finishes and runs its completion block; resume there too.
                """)
        }
        guard case .failure(let error)? = call.result, error is CancellationError else {
            LastWords.fail(
                scenario, "Expected export(\"\(call.name)\") to throw CancellationError, but \(call.described).")
        }
        guard studio.renders.count == 0 else {
            LastWords.fail(
                scenario,
                "export(\"\(call.name)\") was cancelled, yet the studio rendered \(studio.renders.timeline).")
        }
    }

    /// Someone cancels the queue's operations before the export's operation started.
    static func operationCancelled() async {
        exitIfStillRunning(after: patience * 4, status: EXIT_FAILURE)
        let studio = Studio()
        let exporter = Exporter(renderer: studio)
        exporter.queue.isSuspended = true
        let call = Call(exporter, "poster", on: OneThread())
        guard await within({ exporter.queue.operationCount == 1 }) else {
            LastWords.fail(
                "operationCancelled", "export(\"poster\") added no operation to the export queue; \(call.described).")
        }
        let operation = WeakReference(exporter.queue.operations.first)
        exporter.queue.cancelAllOperations()
        exporter.queue.isSuspended = false
        await expectCancelled("operationCancelled", call, studio)
        await expectReleased(
            "operationCancelled", call, "was cancelled by cancelAllOperations() before it started",
            { operation.value })
    }

    /// The task awaiting an export is cancelled while its operation waits in the queue.
    static func taskCancelled() async {
        exitIfStillRunning(after: patience * 4, status: EXIT_FAILURE)
        let studio = Studio()
        let exporter = Exporter(renderer: studio)
        exporter.queue.isSuspended = true
        let call = Call(exporter, "banner", on: OneThread())
        guard await within({ exporter.queue.operationCount == 1 }) else {
            LastWords.fail(
                "taskCancelled", "export(\"banner\") added no operation to the export queue; \(call.described).")
        }
        let operation = WeakReference(exporter.queue.operations.first)
        call.cancel()
        guard await within({ operation.value?.isCancelled == true }) else {
            exporter.queue.isSuspended = false
            LastWords.fail(
                "taskCancelled",
                """
                The task awaiting export("banner") was cancelled, but its operation was not \
                (waited \(patience.seconds) s): the render would still run for nobody. Forward \
                the task's cancellation to the operation.
                """)
        }
        exporter.queue.isSuspended = false
        await expectCancelled("taskCancelled", call, studio)
        await letItsEndRun { operation.value }
    }

    /// The task awaiting an export is cancelled while the render runs; then the render ends. It
    /// runs twice: with a render that returns its file ("cover") and with one that throws
    /// ("scan"), since a completion block may treat a failure apart from the rest.
    static func cancelledWhileRendering() async {
        exitIfStillRunning(after: patience * 8, status: EXIT_FAILURE)
        await cancelledWhileRendering("cover", failing: false)
        await cancelledWhileRendering("scan", failing: true)
    }

    /// One round of `cancelledWhileRendering()`, whose render of `image` returns or throws.
    private static func cancelledWhileRendering(_ image: String, failing: Bool) async {
        let name = "cancelledWhileRendering"
        let ending = failing ? "the render threw ExportError.unreadable(\"\(image)\")" : "the render returned its file"
        let render = Gate("the render of \(image)")
        let studio = Studio(failing: failing ? [image] : [], holding: render)
        let exporter = Exporter(renderer: studio)
        let call = Call(exporter, image, on: OneThread())
        guard await within({ studio.renders.count == 1 }) else {
            render.open()
            LastWords.fail(
                name, "export(\"\(image)\") never began rendering (waited \(patience.seconds) s); \(call.described).")
        }
        let operation = WeakReference(exporter.queue.operations.first)
        call.cancel()
        LastWords.note(
            name,
            """
            The task awaiting export("\(image)") was cancelled while the render ran, and the program \
            stopped when \(ending), before export(_:) had returned: two places resumed the \
            continuation, or one resumed it twice\(failing ? " (once with the render's error, once with CancellationError)" : "").
            """)
        render.open()
        guard await within({ call.isOver }) else {
            LastWords.fail(
                name,
                """
                export("\(image)") never returned (waited \(patience.seconds) s) after its task was \
                cancelled during the render and \(ending): nothing resumed the awaiting task.
                """)
        }
        guard case .failure(let error)? = call.result, error is CancellationError else {
            LastWords.fail(
                name,
                """
                The task awaiting export("\(image)") was cancelled while the render ran, and \(ending); \
                expected CancellationError once the render ended, but \(call.described): a screen \
                that was closed would still receive \(failing ? "the render's error" : "its file").
                """)
        }
        LastWords.note(
            name,
            """
            export("\(image)") threw CancellationError after \(ending), then the program stopped as \
            the operation ended: its continuation was resumed a second time.
            """)
        await expectReleased(name, call, "was cancelled while its render ran", { operation.value })
    }

    /// A task that is already cancelled calls export while the queue is suspended: it returns at
    /// once without enqueueing; nothing made for it stays, with the exporter alive or let go; and
    /// the exporter's next export, of the same image, renders.
    static func alreadyCancelled() async {
        let name = "alreadyCancelled"
        exitIfStillRunning(after: patience * 4, status: EXIT_FAILURE)
        let renderer: WeakReference<Studio>
        do {
            let studio = Studio()
            renderer = WeakReference(studio)
            let exporter = Exporter(renderer: studio)
            // The studio's strong references, counted through an unretained handle, so that the
            // counting itself (a closure that captured the studio) adds none.
            let handle = Unmanaged.passUnretained(studio)
            let references = { _getRetainCount(handle.takeUnretainedValue()) }
            let held = references()
            exporter.queue.isSuspended = true
            let call = Call(exporter, "thumbnail", on: OneThread(), cancelledFirst: true)
            guard await within({ call.isOver }) else {
                let queued = exporter.queue.operationCount
                exporter.queue.isSuspended = false
                LastWords.fail(
                    name,
                    """
                    export("thumbnail") was called from a task that was already cancelled, and while \
                    the export queue was suspended it had not returned (waited \(patience.seconds) s; \
                    the queue held \(queued) operation(s)). A task cancelled before its operation is \
                    enqueued never enqueues it: it throws CancellationError at once. On Apple \
                    platforms the cancelled operation is already finished, and adding it would raise.
                    """)
            }
            let queued = exporter.queue.operationCount
            exporter.queue.isSuspended = false
            guard queued == 0 else {
                LastWords.fail(
                    name,
                    """
                    export("thumbnail") was called from a task that was already cancelled and \
                    \(call.described), yet it had added \(queued) operation(s) to the export queue. A \
                    task cancelled before its operation is enqueued never enqueues it: on Apple \
                    platforms the cancelled operation is already finished, and adding it would raise.
                    """)
            }
            await expectCancelled(name, call, studio)
            guard await within({ references() <= held }) else {
                LastWords.fail(
                    name,
                    """
                    export("thumbnail"), called from a task that was already cancelled, threw \
                    CancellationError, yet \(patience.seconds) s later something made for that \
                    export still held the renderer (\(references() - held) reference(s) \
                    more than before it), while the exporter lives on: most likely its operation, \
                    kept by a list or dictionary of the exporter's that only the operation's end \
                    clears, or by its own completion block, which never runs.
                    """)
            }
            let again = Call(exporter, "thumbnail", on: OneThread())
            guard await within({ again.isOver }), case .success? = again.result else {
                LastWords.fail(
                    name,
                    """
                    After export("thumbnail") was called from a task that was already cancelled, \
                    export("thumbnail") again, asked for by a task nobody cancelled, \(again.described). A \
                    cancellation ends one call: the next call starts afresh, with state of its own.
                    """)
            }
            guard studio.renders.count == 1 else {
                LastWords.fail(
                    name,
                    """
                    export("thumbnail") was called from a task that was already cancelled, yet the \
                    studio rendered \(studio.renders.timeline) (expected the second thumbnail alone).
                    """)
            }
        }
        guard await within({ renderer.value == nil }) else {
            LastWords.fail(
                name,
                """
                export("thumbnail"), called from a task that was already cancelled, threw \
                CancellationError; then the exporter and the calls were let go, yet \
                \(patience.seconds) s later the renderer was still in memory. Something made for \
                an export keeps it: most likely an operation never enqueued, holding itself \
                through its completion block, which never runs, so neither platform clears it.
                """)
        }
    }

    /// Four exports wait, two of each image; the task of the first banner and that of the
    /// second poster are cancelled. The other two, and an export asked for afterwards, render.
    static func othersGoOn() async {
        let name = "othersGoOn"
        exitIfStillRunning(after: patience * 4, status: EXIT_FAILURE)
        let studio = Studio()
        let exporter = Exporter(renderer: studio)
        exporter.queue.isSuspended = true
        var calls: [Call] = []
        for image in ["banner", "poster", "banner", "poster"] {
            let call = Call(exporter, image, on: OneThread())
            calls.append(call)
            guard await within({ exporter.queue.operationCount == calls.count }) else {
                LastWords.fail(
                    name,
                    """
                    export("\(image)") added no operation to the export queue (it holds \
                    \(exporter.queue.operationCount) of \(calls.count)); \(call.described).
                    """)
            }
        }
        let (banner, poster, bannerAgain, posterAgain) = (calls[0], calls[1], calls[2], calls[3])
        banner.cancel()
        posterAgain.cancel()
        _ = await within({
            (banner.isOver || exporter.queue.operations.contains { $0.isCancelled })
                && (posterAgain.isOver || exporter.queue.operations.filter(\.isCancelled).count == 2)
        })
        exporter.queue.isSuspended = false
        guard await within({ calls.allSatisfy(\.isOver) }) else {
            LastWords.fail(
                name,
                """
                After the tasks awaiting the first banner and the second poster were cancelled, \
                \(calls.map(\.described).joined(separator: ", ")) (waited \(patience.seconds) s).
                """)
        }
        for (cancelled, which) in [(banner, "the first"), (posterAgain, "the second")] {
            guard case .failure(let error)? = cancelled.result, error is CancellationError else {
                LastWords.fail(
                    name,
                    """
                    The task awaiting \(which) export("\(cancelled.name)") was cancelled while its \
                    operation waited, yet \(cancelled.described): the cancellation never reached \
                    that export's operation.
                    """)
            }
        }
        for (other, which, twin) in [(poster, "first", "second"), (bannerAgain, "second", "first")] {
            guard case .success? = other.result else {
                LastWords.fail(
                    name,
                    """
                    Two exports of each image waited; only the tasks awaiting the first banner and \
                    the second poster were cancelled, yet the \(which) export("\(other.name)") \
                    \(other.described) while the \(twin) export of that image was cancelled. A \
                    task's cancellation belongs to its own export: cancel that call's operation, \
                    not the queue's, not one found by the image's name, and keep what one call \
                    learns out of the exporter.
                    """)
            }
        }
        let flyer = Call(exporter, "flyer", on: OneThread())
        guard await within({ flyer.isOver }) else {
            LastWords.fail(name, "export(\"flyer\"), asked for after the cancellations, \(flyer.described).")
        }
        guard case .success? = flyer.result else {
            LastWords.fail(
                name,
                """
                export("flyer"), asked for by a task that nobody cancelled after two other tasks \
                were cancelled, \(flyer.described). A cancellation ends one call: the next call \
                starts afresh, with state of its own.
                """)
        }
    }

    /// Two exporters of one studio. The first one's queue is suspended with export("poster")
    /// waiting in it, while the second exporter exports "map". Then the second one's queue is
    /// suspended with export("flyer") waiting, and the first one's queue cancelled: the poster
    /// is cancelled, the flyer renders.
    static func twoExporters() async {
        let name = "twoExporters"
        exitIfStillRunning(after: patience * 6, status: EXIT_FAILURE)
        let studio = Studio()
        let first = Exporter(renderer: studio)
        let second = Exporter(renderer: studio)
        first.queue.isSuspended = true
        let poster = Call(first, "poster", on: OneThread())
        guard await within({ first.queue.operationCount == 1 }) else {
            LastWords.fail(
                name,
                """
                export("poster") added no operation to the first exporter's suspended queue (it \
                holds \(first.queue.operationCount)); \(poster.described).
                """)
        }
        let map = Call(second, "map", on: OneThread())
        guard await within({ map.isOver }) else {
            LastWords.fail(
                name,
                """
                With the first exporter's queue suspended, export("map") on a second exporter never \
                returned (waited \(patience.seconds) s); the studio rendered \(studio.renders.all). \
                The second exporter's work waits in the first one's queue: they share it. Each \
                exporter creates a queue of its own, never one kept in a static or a global.
                """)
        }
        guard case .success? = map.result else {
            LastWords.fail(
                name,
                """
                With the first exporter's queue suspended, a second exporter's \(map.described); \
                expected the rendered file: the first exporter's queue is not the second one's.
                """)
        }
        second.queue.isSuspended = true
        let flyer = Call(second, "flyer", on: OneThread())
        guard await within({ second.queue.operationCount == 1 }) else {
            LastWords.fail(
                name,
                """
                export("flyer") added no operation to the second exporter's suspended queue (it \
                holds \(second.queue.operationCount)); \(flyer.described).
                """)
        }
        first.queue.cancelAllOperations()
        first.queue.isSuspended = false
        guard await within({ poster.isOver }),
            case .failure(let error)? = poster.result, error is CancellationError
        else {
            LastWords.fail(
                name,
                """
                The first exporter's queue was cancelled while export("poster") waited in it: \
                expected CancellationError, but \(poster.described) (waited \(patience.seconds) s).
                """)
        }
        second.queue.isSuspended = false
        guard await within({ flyer.isOver }), case .success? = flyer.result else {
            LastWords.fail(
                name,
                """
                Cancelling the first exporter's queue reached the second exporter's export: \
                \(flyer.described) (waited \(patience.seconds) s), where the file was expected. \
                Each exporter's queue is its own.
                """)
        }
    }
}

@Suite("Cancelling the awaiting task cancels the operation, and every path resumes once", .watched)
struct CancellingSpecs {
    // Look at what `Exporter.export(_:)` resumes with when its operation finishes without a
    // result. Lesson: "Resuming on every path".
    // Covers: C69, C70, C72
    // Paths: memory, collaborators
    @Test("an operation cancelled before it started still ends the export, with CancellationError")
    func operationCancelledBeforeStartEndsTheExport() async {
        LastWords.forget("operationCancelled")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The export queue's operations were cancelled before the export's operation started: \
            expected export(_:) to throw CancellationError, without rendering and without \
            stopping the program.
            \(lesson.see("Resuming on every path"))
            """
        ) {
            await CancellingScenario.operationCancelled()
        }
        LastWords.explain("operationCancelled", outcome)
    }

    // Look at what `Exporter.export(_:)` does when the task that awaits it is cancelled.
    // Lesson: "Forwarding cancellation".
    // Covers: C70, C71
    // Paths: reuse
    @Test("cancelling the awaiting task cancels the queued operation; export throws CancellationError")
    func cancellingTheTaskCancelsTheOperation() async {
        LastWords.forget("taskCancelled")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The task awaiting export(_:) was cancelled while its operation waited in the queue: \
            expected the operation cancelled, nothing rendered, CancellationError thrown once, \
            and the program still running.
            \(lesson.see("Forwarding cancellation"))
            """
        ) {
            await CancellingScenario.taskCancelled()
        }
        LastWords.explain("taskCancelled", outcome)
    }

    // Look at how many places in `Exporter.export(_:)` can resume the continuation, and what
    // they resume with when the task was cancelled while the render ran, whether the render
    // returned or threw. Lesson: "Resuming once".
    // Covers: C70, C71, C72
    // Paths: memory, reuse
    @Test("a task cancelled while its render runs gets CancellationError, once, when the render ends")
    func cancelledWhileRenderingResumesOnce() async {
        LastWords.forget("cancelledWhileRendering")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            The task awaiting export("cover") was cancelled while the render ran, and then that \
            of export("scan"), whose render throws: expected export(_:) to throw \
            CancellationError once each render ended, exactly once, and the program still running.
            \(lesson.see("Resuming once"))
            """
        ) {
            await CancellingScenario.cancelledWhileRendering()
        }
        LastWords.explain("cancelledWhileRendering", outcome)
    }

    // Look at what `Exporter.export(_:)` does when its task is cancelled before it even
    // enqueues the operation, what the operation it made keeps, and what the exporter keeps for
    // its next call. Lesson: "Forwarding cancellation".
    // Covers: C70, C71, C72
    // Paths: memory, reuse, collaborators
    @Test(
        "export from a task that is already cancelled renders nothing, throws CancellationError, and keeps nothing"
    )
    func alreadyCancelledTaskRendersNothing() async {
        LastWords.forget("alreadyCancelled")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            export(_:) was called from a task that was already cancelled, with the export queue \
            suspended: expected CancellationError at once, nothing enqueued or rendered, nothing \
            kept in memory afterwards (the exporter alive or let go), the next export rendered, \
            and the program still running.
            \(lesson.see("Forwarding cancellation"))
            """
        ) {
            await CancellingScenario.alreadyCancelled()
        }
        LastWords.explain("alreadyCancelled", outcome)
    }

    // Look at what the cancellation handler in `Exporter.export(_:)` cancels, and where the
    // state it shares with the rest of the call lives. Lesson: "Forwarding cancellation".
    // Covers: C71, C72
    // Paths: interference, reuse, collaborators
    @Test("cancelling one export's task leaves the other exports, waiting or asked for later, to render")
    func cancellingOneExportLeavesTheOthers() async {
        LastWords.forget("othersGoOn")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Two exports of each of two images waited in the queue, and the tasks awaiting the \
            first of one image and the second of the other were cancelled: expected those two \
            to throw CancellationError, the other two to render, and an export asked for \
            afterwards to render too.
            \(lesson.see("Forwarding cancellation"))
            """
        ) {
            await CancellingScenario.othersGoOn()
        }
        LastWords.explain("othersGoOn", outcome)
    }

    // Look at where `Exporter` gets its queue: is it the exporter's own, or shared by every
    // exporter? Lesson: "Reading the result".
    // Covers: C71, C72
    // Paths: interference, collaborators
    @Test("suspending or cancelling one exporter's queue leaves another exporter's exports alone")
    func eachExporterHasItsOwnQueue() async {
        LastWords.forget("twoExporters")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            Two exporters: with the first one's queue suspended, expected the second one to \
            export "map"; with the second one's queue suspended and the first one's cancelled, \
            expected the first one's waiting export to throw CancellationError and the second \
            one's to render once resumed.
            \(lesson.see("Reading the result"))
            """
        ) {
            await CancellingScenario.twoExporters()
        }
        LastWords.explain("twoExporters", outcome)
    }
}
