import Foundation

/// The app's async export API, on top of the operation-based engine.
public final class Exporter: Sendable {
    /// The engine's queue; every export runs on it.
    public let queue: OperationQueue
    private let renderer: any Renderer

    public init(renderer: any Renderer) {
        self.renderer = renderer
        queue = OperationQueue()
        queue.name = "export"
        queue.maxConcurrentOperationCount = 2
    }

    /// Exports the image called `name`, suspending until its operation has finished.
    ///
    /// Throws the render's error, or `CancellationError` when the export was cancelled (the
    /// awaiting task, or the operation itself) before it rendered.
    public func export(_ name: String) async throws -> Export {
        let operation = ExportOperation(name: name, renderer: renderer)
        // The operation is this call's own, so it runs at the class of the task that awaits it;
        // the queue's class would apply to every export alike.
        operation.qualityOfService = QualityOfService(Task.currentPriority)
        let handOff = HandOff()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Runs exactly once, when the operation has finished: rendered, failed or cancelled.
                // Whether Foundation keeps an operation alive while its completion block runs is
                // not documented, so the block holds it, and lets go of itself to end the cycle.
                operation.completionBlock = {
                    continuation.resume(with: Self.outcome(of: operation))
                    operation.completionBlock = nil
                }
                // A task cancelled before this point never enqueues: on Apple platforms a
                // cancelled operation in no queue is already finished, and adding it would raise.
                guard handOff.enqueue({ queue.addOperation(operation) }) else {
                    operation.completionBlock = nil
                    continuation.resume(throwing: CancellationError())
                    return
                }
            }
        } onCancel: {
            if handOff.cancelBeforeEnqueue() == false {
                operation.cancel()
            }
        }
    }

    /// What an awaiting caller gets from a finished operation.
    private static func outcome(of operation: ExportOperation) -> Result<Export, any Error> {
        guard !operation.isCancelled, let result = operation.result else {
            return .failure(CancellationError())
        }
        return result
    }
}

/// Decides, once, whether an export's operation reaches its queue or its task was cancelled first.
private final class HandOff: @unchecked Sendable {
    // The lock makes "cancelled before enqueueing" and "enqueued" exclusive: it is held while the
    // operation is added, so a cancellation never meets an operation that is in no queue yet.
    private let lock = NSLock()
    private var cancelled = false
    private var enqueued = false

    /// Runs `add` unless the task was cancelled first; returns whether it ran.
    func enqueue(_ add: () -> Void) -> Bool {
        lock.withLock {
            guard !cancelled else { return false }
            add()
            enqueued = true
            return true
        }
    }

    /// Records a cancellation; returns true when it came before the operation was enqueued.
    func cancelBeforeEnqueue() -> Bool {
        lock.withLock {
            cancelled = true
            return !enqueued
        }
    }
}

extension QualityOfService {
    /// The quality of service that stands for a task priority, rounding down between the named
    /// ones. `.medium` gets `.utility`: Foundation's `.default` means "no class of its own", which
    /// would leave the export at the queue's class (`.background` for a new queue on Apple platforms).
    fileprivate init(_ priority: TaskPriority) {
        switch priority {
        case .high...: self = .userInitiated
        case .medium...: self = .utility
        case .low...: self = .utility
        default: self = .background
        }
    }
}
