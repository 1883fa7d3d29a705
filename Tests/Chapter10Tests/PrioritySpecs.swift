import Chapter10
import Foundation
import KataTestSupport
import Testing

/// The class an operation waiting in `queue` will run at: its own, or the queue's when it has none.
private func effectiveClass(of operation: Operation, in queue: OperationQueue) -> QualityOfService {
    operation.qualityOfService == .default ? queue.qualityOfService : operation.qualityOfService
}

/// The export operations waiting in `queue`, by image name.
private func waiting(in queue: OperationQueue) -> [String: ExportOperation] {
    Dictionary(
        queue.operations.compactMap { $0 as? ExportOperation }.map { ($0.image, $0) },
        uniquingKeysWith: { first, _ in first })
}

@Suite("An export runs at the class that stands for the awaiting task's priority", .watched)
struct PrioritySpecs {
    // Look at `Exporter.export(_:)`: which class does the operation it makes get? Lesson:
    // "Passing on the caller's priority".
    // Covers: C74
    // Paths: values
    @Test(
        "the operation waits in the queue at the class matching the priority of the task that awaits it",
        arguments: [
            (TaskPriority.high, [QualityOfService.userInitiated]),
            // Foundation's `.default` means "no class of its own" on Apple platforms, so `.medium`
            // must get a named class: the one below it or the one above it.
            (.medium, [.utility, .userInitiated]),
            (.low, [.utility]),
            (.background, [.background]),
            // Priorities between and above the named ones (any raw value makes a priority): each
            // gets the class of a named neighbour, so matching the named values alone fails.
            (TaskPriority(rawValue: TaskPriority.high.rawValue + 8), [.userInitiated]),
            (TaskPriority(rawValue: TaskPriority.high.rawValue - 2), [.utility, .userInitiated]),
            // Between `.low` and `.medium` both neighbours stand for a class above `.background`:
            // matching `.low` alone lets these fall through to the lowest class.
            (TaskPriority(rawValue: TaskPriority.low.rawValue + 2), [.utility, .userInitiated]),
            (TaskPriority(rawValue: TaskPriority.low.rawValue - 4), [.background, .utility]),
            // Below `.background` the only named neighbour is `.background` itself.
            (TaskPriority(rawValue: TaskPriority.background.rawValue - 4), [.background]),
        ])
    func exportRunsAtTheAwaitingTasksClass(priority: TaskPriority, expected: [QualityOfService]) async {
        let exporter = Exporter(renderer: Studio())
        exporter.queue.isSuspended = true
        let call = Call(exporter, "icon", on: OneThread(), priority: priority)
        defer { exporter.queue.isSuspended = false }
        guard
            await waitUntil(
                "export(\"icon\") to add its operation to the export queue", timeout: patience,
                hint: lesson.see("Suspending, not blocking"),
                givingUpWhen: { call.isOver ? "\(call.described) first" : nil },
                { waiting(in: exporter.queue)["icon"] != nil })
        else { return }
        guard let operation = waiting(in: exporter.queue)["icon"] else { return }
        let service = effectiveClass(of: operation, in: exporter.queue)
        let named: [TaskPriority] = [.high, .medium, .low, .background]
        let between =
            named.contains(priority)
            ? ""
            : " \(priority) is none of the named priorities: it gets the class of a named neighbour,"
                + " found by comparing priorities (they are Comparable), not by matching the named ones."
        #expect(
            expected.contains(operation.qualityOfService) && expected.contains(service),
            """
            export("icon") was awaited by a task of priority \(priority), but its operation waits to run \
            at .\(name(of: service)) (its own qualityOfService .\(name(of: operation.qualityOfService)), the \
            queue's .\(name(of: exporter.queue.qualityOfService))); expected \
            \(expected.map { "." + name(of: $0) }.joined(separator: " or ")), set on the operation itself. The \
            operation does not learn the caller's priority unless export(_:) passes it on.\(between)
            \(lesson.see("Passing on the caller's priority"))
            """)
    }

    // Look at where `Exporter.export(_:)` puts the class: each call has its own operation, but
    // all share one queue. Lesson: "Passing on the caller's priority".
    // Covers: C74
    // Paths: interference, values
    @Test("two exports awaited at once by tasks of different priorities each keep their own class")
    func concurrentExportsKeepTheirOwnClasses() async {
        let exporter = Exporter(renderer: Studio())
        exporter.queue.isSuspended = true
        let urgent = Call(exporter, "urgent", on: OneThread(), priority: .high)
        let prefetch = Call(exporter, "prefetch", on: OneThread(), priority: .background)
        defer { exporter.queue.isSuspended = false }
        guard
            await waitUntil(
                "both exports, urgent and prefetch, to add their operations", timeout: patience,
                hint: lesson.see("Suspending, not blocking"),
                givingUpWhen: {
                    urgent.isOver || prefetch.isOver ? "\(urgent.described), \(prefetch.described)" : nil
                },
                { waiting(in: exporter.queue).count == 2 })
        else { return }
        let operations = waiting(in: exporter.queue)
        guard let first = operations["urgent"], let second = operations["prefetch"] else { return }
        let classes = (effectiveClass(of: first, in: exporter.queue), effectiveClass(of: second, in: exporter.queue))
        #expect(
            classes == (.userInitiated, .background),
            """
            A .high task's export waits to run at .\(name(of: classes.0)) and a .background task's at \
            .\(name(of: classes.1)); expected .userInitiated and .background. The class belongs to each \
            call's own operation: the queue is shared by every export.
            \(lesson.see("Passing on the caller's priority"))
            """)
    }

    // Look at which priority `Exporter.export(_:)` reads: a task's priority can rise while it
    // runs, when a more urgent task awaits it. Lesson: "Passing on the caller's priority".
    // Covers: C74
    // Paths: values
    @Test("a .low task raised to .high by a .high task awaiting it exports at .userInitiated")
    func escalatedTaskExportsAtItsRaisedClass() async {
        let exporter = Exporter(renderer: Studio())
        exporter.queue.isSuspended = true
        defer { exporter.queue.isSuspended = false }
        let seen = Protected<(current: TaskPriority, base: TaskPriority?)?>(nil)
        let outcome = Protected<Result<Export, any Error>?>(nil)
        let prefetch = Task(priority: .low) {
            // Waits, suspended, until the .high task below awaits this one and so raises it.
            _ = await comesTrue(within: patience) { Task.currentPriority >= .high }
            seen.withValue { $0 = (Task.currentPriority, withUnsafeCurrentTask { $0?.basePriority }) }
            let result = await Result { try await exporter.export("icon") }
            outcome.withValue { $0 = result }
        }
        let urgent = Task(priority: .high) { await prefetch.value }
        defer { urgent.cancel() }
        guard
            await waitUntil(
                "export(\"icon\"), called by a .low task that a .high task awaits, to add its operation",
                timeout: patience * 2, hint: lesson.see("Suspending, not blocking"),
                givingUpWhen: { outcome.value.map { "export(\"icon\") ended first: \($0)" } },
                { waiting(in: exporter.queue)["icon"] != nil })
        else { return }
        guard let raised = seen.value, raised.current >= .high else {
            Issue.record(
                "The .low task's priority was not raised by the .high task awaiting it (\(String(describing: seen.value))): this platform's runtime does not escalate; the spec cannot judge."
            )
            return
        }
        guard let operation = waiting(in: exporter.queue)["icon"] else { return }
        let service = effectiveClass(of: operation, in: exporter.queue)
        #expect(
            operation.qualityOfService == .userInitiated && service == .userInitiated,
            """
            export("icon") was called by a task created at .low whose priority a .high task awaiting it \
            had raised to \(raised.current) (its base priority stays \(raised.base.map { "\($0)" } ?? "unknown")), \
            but its operation waits to run at .\(name(of: service)) (its own qualityOfService \
            .\(name(of: operation.qualityOfService))); expected .userInitiated. Task.currentPriority \
            includes what was raised so far; a task's base priority does not.
            \(lesson.see("Passing on the caller's priority"))
            """)
    }
}

/// The name of a class, the same on every platform (raw values differ).
private func name(of service: QualityOfService) -> String {
    switch service {
    case .userInteractive: "userInteractive"
    case .userInitiated: "userInitiated"
    case .utility: "utility"
    case .background: "background"
    case .default: "default"
    @unknown default: "unknown"
    }
}
