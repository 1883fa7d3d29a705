import Chapter10
import Foundation
import KataTestSupport
import Testing

/// What an export should have produced for `name`.
private func rendered(_ name: String) -> Export {
    Export(name: name, bytes: Studio.size(of: name))
}

@Suite("export(_:) suspends until its operation has finished, without holding a thread", .watched)
struct AwaitingSpecs {
    // Look at `Exporter.export(_:)`: how does it wait for its operation? Lesson: "Suspending,
    // not blocking" and "Reading the result".
    // Covers: C68, C72
    @Test("while its operation waits, the awaiting thread is free; then export returns the render")
    func exportAwaitsWithoutHoldingItsThread() async {
        let studio = Studio()
        let exporter = Exporter(renderer: studio)
        exporter.queue.isSuspended = true
        let thread = OneThread()
        let call = Call(exporter, "cover", on: thread)
        defer { exporter.queue.isSuspended = false }
        guard
            await waitUntil(
                "export(\"cover\") to add its operation to the export queue", timeout: patience,
                hint: lesson.see("Suspending, not blocking"),
                givingUpWhen: { call.isOver ? "\(call.described) first" : nil },
                { exporter.queue.operationCount == 1 })
        else { return }
        let free = await thread.isFree(within: Bound.scaled(.milliseconds(150)))
        #expect(
            free,
            """
            While the operation of cover waited in the queue, no other task could run on the thread that \
            export("cover") was called from: export(_:) blocked it until the operation finished. \
            An async function suspends instead; a blocked cooperative thread is one of a few.
            \(lesson.see("Suspending, not blocking"))
            """)
        #expect(
            !call.isOver,
            """
            \(call.described) while its operation was still waiting in the queue: the result was read \
            before the operation had run.
            \(lesson.see("Reading the result"))
            """)
        exporter.queue.isSuspended = false
        guard
            await waitUntil(
                "export(\"cover\") to return once its operation finished", timeout: patience,
                hint: lesson.see("Resuming on every path"), { call.isOver })
        else { return }
        #expect(
            (try? call.result?.get()) == rendered("cover"),
            "Expected export(\"cover\") to return \(rendered("cover")), but \(call.described). \(lesson.see("Reading the result"))"
        )
    }

    // Look at what `Exporter.export(_:)` does when the render throws, and what that failure
    // does to the exporter's other calls, beside it or later. Lesson: "Resuming on every path"
    // and "Reading the result".
    // Covers: C68, C69, C72
    // Paths: interference, reuse
    @Test(
        "a render that fails makes export throw its error, without holding the thread meanwhile, and ends no other export"
    )
    func failedExportThrowsItsError() async {
        let cover = Gate("the render of cover")
        let studio = Studio(failing: ["scan"], holding: cover, only: ["cover"])
        let exporter = Exporter(renderer: studio)
        exporter.queue.isSuspended = true
        let thread = OneThread()
        let call = Call(exporter, "scan", on: thread)
        defer {
            exporter.queue.isSuspended = false
            cover.open()
        }
        guard
            await waitUntil(
                "export(\"scan\") to add its operation to the export queue", timeout: patience,
                givingUpWhen: { call.isOver ? "\(call.described) first" : nil },
                { exporter.queue.operationCount == 1 })
        else { return }
        let free = await thread.isFree(within: Bound.scaled(.milliseconds(150)))
        #expect(
            free,
            """
            While the operation of scan waited in the queue, no other task could run on the thread that \
            export("scan") was called from: export(_:) blocked it.
            \(lesson.see("Suspending, not blocking"))
            """)
        let beside = Call(exporter, "cover", on: thread)
        guard
            await waitUntil(
                "export(\"cover\"), asked for beside export(\"scan\"), to add its operation", timeout: patience,
                hint: lesson.see("Suspending, not blocking"),
                givingUpWhen: { beside.isOver ? "\(beside.described) first" : nil },
                { exporter.queue.operationCount == 2 })
        else { return }
        exporter.queue.isSuspended = false
        guard
            await waitUntil(
                "export(\"scan\") to throw the render's error",
                timeout: patience,
                hint: """
                    The operation finished with a failure, but nothing resumed the awaiting \
                    task: it waits for good. \(lesson.see("Resuming on every path"))
                    """,
                { call.isOver })
        else { return }
        guard case .failure(let error)? = call.result else {
            Issue.record(
                "Expected export(\"scan\") to throw, but \(call.described). \(lesson.see("Resuming on every path"))")
            return
        }
        #expect(
            error as? ExportError == .unreadable("scan"),
            "Expected the render's error, ExportError.unreadable(\"scan\"), but \(call.described). \(lesson.see("Resuming on every path"))"
        )
        cover.open()
        guard
            await waitUntil(
                "export(\"cover\"), whose render was let go once export(\"scan\") had failed, to return",
                timeout: patience, hint: "\(beside.described). \(lesson.see("Resuming on every path"))",
                { beside.isOver })
        else { return }
        #expect(
            (try? beside.result?.get()) == rendered("cover"),
            """
            export("scan") failed while export("cover") waited or rendered beside it; expected \
            export("cover") to return \(rendered("cover")), but \(beside.described). A failure \
            belongs to its own call: it throws there and cancels nothing of the exporter's other \
            calls (cancelAllOperations() on the queue ends every export in it).
            \(lesson.see("Reading the result"))
            """)
        let again = Call(exporter, "scan", on: thread)
        guard
            await waitUntil(
                "export(\"scan\"), asked for again after it had failed, to return", timeout: patience,
                hint: "\(again.described). \(lesson.see("Resuming on every path"))",
                { again.isOver })
        else { return }
        let renders = studio.renders.all.filter { $0 == "scan" }.count
        var threwAgain = false
        if case .failure(let error)? = again.result, error as? ExportError == .unreadable("scan") { threwAgain = true }
        #expect(
            renders == 2 && threwAgain,
            """
            Expected export("scan"), asked for again after it had failed, to render "scan" again and \
            throw ExportError.unreadable("scan") again, but the studio rendered "scan" \(renders) \
            time(s) in all and \(again.described). Every call has an operation of its own that \
            renders, also for an image that failed before (it may be readable now); an error kept \
            from an earlier call is an answer no operation of this call produced.
            \(lesson.see("Reading the result"))
            """)
    }

    // Look at how `Exporter.export(_:)` waits: two calls from one thread can both be under way
    // only if the first suspends instead of blocking. Then, where it keeps what it waits for:
    // each call must have its own, also a call for an image exported before. Lesson:
    // "Suspending, not blocking" and "Reading the result".
    // Covers: C68, C72
    // Paths: interference, reuse
    @Test(
        "two exports awaited from one thread at once each get their own operation's result, and an image asked for again renders again"
    )
    func concurrentExportsGetTheirOwnResults() async {
        let studio = Studio()
        let exporter = Exporter(renderer: studio)
        exporter.queue.isSuspended = true
        let thread = OneThread()
        let front = Call(exporter, "front", on: thread)
        let back = Call(exporter, "back", on: thread)
        defer { exporter.queue.isSuspended = false }
        guard
            await waitUntil(
                "both exports, front and back, to add their operations while both await",
                timeout: patience,
                hint: """
                    The export queue holds \(exporter.queue.operationCount) operation(s). Both \
                    calls come from one thread: the second can only start if the first gave the \
                    thread up while it waits. \(lesson.see("Suspending, not blocking"))
                    """,
                givingUpWhen: { front.isOver || back.isOver ? "\(front.described), \(back.described)" : nil },
                { exporter.queue.operationCount == 2 })
        else { return }
        exporter.queue.isSuspended = false
        guard
            await waitUntil(
                "both exports to return once their operations finished", timeout: patience,
                hint: "\(front.described), \(back.described). \(lesson.see("Resuming on every path"))",
                { front.isOver && back.isOver })
        else { return }
        #expect(
            (try? front.result?.get()) == rendered("front") && (try? back.result?.get()) == rendered("back"),
            """
            Expected export("front") to return \(rendered("front")) and export("back") to return \
            \(rendered("back")), but \(front.described) and \(back.described). Each call awaits \
            its own operation and reads its result from that operation.
            \(lesson.see("Reading the result"))
            """)
        let again = Call(exporter, "front", on: thread)
        guard
            await waitUntil(
                "export(\"front\"), asked for again after the first call returned, to return", timeout: patience,
                hint: "\(again.described). \(lesson.see("Resuming on every path"))",
                { again.isOver })
        else { return }
        let renders = studio.renders.all.filter { $0 == "front" }.count
        #expect(
            renders == 2 && (try? again.result?.get()) == rendered("front"),
            """
            Expected export("front"), asked for again after the first call had returned, to render \
            "front" again and return \(rendered("front")), but the studio rendered "front" \
            \(renders) time(s) in all and \(again.described). Every call has an operation of its \
            own that renders; a call answered from an earlier call's file gets a result no \
            operation of its own produced, and the exporter keeps every file it made.
            \(lesson.see("Reading the result"))
            """)
    }
}

/// How an export ends, for the memory spec.
enum Ending: String, CaseIterable, Sendable {
    case rendered, failed, cancelled
}

@Suite("Nothing outlives an export", .watched)
struct ExportLifetimeSpecs {
    // Look at what the operation's completion block holds, and for how long. Lesson: "Reading
    // the result".
    // Covers: C72
    // Paths: memory, collaborators
    @Test("once export(_:) has returned, its operation is gone", arguments: Ending.allCases)
    func operationIsReleased(ending: Ending) async {
        guard ending != .cancelled else {
            // A cancelled export may resume its caller twice, which stops the program: that case
            // runs in a process of its own.
            LastWords.forget("cancelledExportReleased")
            let outcome = await #expect(
                processExitsWith: .success,
                """
                The task awaiting export("map") was cancelled while its operation waited in the \
                queue: expected export(_:) to return, and then its operation to be freed, without \
                stopping the program. Something keeps the operation (most likely its own completion \
                block, capturing it strongly), or, if the program stopped (a signal), two places \
                resumed the same continuation.
                \(lesson.see("Reading the result"))
                """
            ) {
                await ExportLifetimeSpecs.cancelledExportReleased()
            }
            LastWords.explain("cancelledExportReleased", outcome)
            return
        }
        let exporter = Exporter(renderer: Studio(failing: ending == .failed ? ["map"] : []))
        exporter.queue.isSuspended = true
        let call = Call(exporter, "map", on: OneThread())
        guard
            await waitUntil(
                "export(\"map\") to add its operation to the export queue", timeout: patience,
                hint: lesson.see("Suspending, not blocking"),
                givingUpWhen: { call.isOver ? "\(call.described) first" : nil },
                { exporter.queue.operationCount == 1 })
        else {
            exporter.queue.isSuspended = false
            return
        }
        let operation = WeakReference(exporter.queue.operations.first)
        exporter.queue.isSuspended = false
        guard
            await waitUntil(
                "export(\"map\") to return once its operation \(ending)", timeout: patience,
                hint: lesson.see("Resuming on every path"), { call.isOver })
        else { return }
        let released = await comesTrue(within: patience) { operation.value == nil }
        #expect(released, Comment(rawValue: Self.stillHeld(ending, call)))
    }

    /// What a spec says when the operation of `call`, which ended as `ending`, is still in memory.
    private static func stillHeld(_ ending: Ending, _ call: Call) -> String {
        """
        export("map") \(ending) and returned (\(call.described)), yet \(patience.seconds) s later \
        its operation was still in memory. Something keeps it: most likely its own completion \
        block, capturing it strongly without ever letting go (a cycle that Linux never breaks; \
        Apple platforms clear completionBlock once it begins, so there the cycle ends by itself), \
        or a list of operations the exporter keeps.
        \(lesson.see("Reading the result"))
        """
    }

    /// Cancels the task awaiting an export while its operation waits, then checks that export
    /// returned and that the operation was freed; a second resume stops this process.
    static func cancelledExportReleased() async {
        let name = "cancelledExportReleased"
        exitIfStillRunning(after: patience * 4, status: EXIT_FAILURE)
        let exporter = Exporter(renderer: Studio())
        exporter.queue.isSuspended = true
        let call = Call(exporter, "map", on: OneThread())
        guard await comesTrue(within: patience, { exporter.queue.operationCount == 1 }) else {
            LastWords.fail(name, "export(\"map\") added no operation to the export queue; \(call.described).")
        }
        let operation = WeakReference(exporter.queue.operations.first)
        LastWords.note(
            name, "the task awaiting export(\"map\") was cancelled, and the process stopped before export returned.")
        call.cancel()
        exporter.queue.isSuspended = false
        guard await comesTrue(within: patience, { call.isOver }) else {
            LastWords.fail(
                name,
                """
                export("map") never returned (waited \(patience.seconds) s) after its task was \
                cancelled. \(lesson.see("Resuming on every path"))
                """)
        }
        LastWords.note(name, "export(\"map\") returned (\(call.described)), and the process stopped just after.")
        guard await comesTrue(within: patience, { operation.value == nil }) else {
            LastWords.fail(name, stillHeld(.cancelled, call))
        }
    }
}
