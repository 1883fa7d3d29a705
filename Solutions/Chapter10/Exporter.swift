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
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Runs exactly once, when the operation has finished: rendered, failed or cancelled.
                operation.completionBlock = { [weak operation] in
                    continuation.resume(with: Self.outcome(of: operation))
                }
                queue.addOperation(operation)
            }
        } onCancel: {
            operation.cancel()
        }
    }

    /// What an awaiting caller gets from a finished operation.
    private static func outcome(of operation: ExportOperation?) -> Result<Export, any Error> {
        guard let operation, !operation.isCancelled, let result = operation.result else {
            return .failure(CancellationError())
        }
        return result
    }
}

extension QualityOfService {
    /// The quality of service that stands for a task priority, rounding down between the named ones.
    fileprivate init(_ priority: TaskPriority) {
        switch priority {
        case .high...: self = .userInitiated
        case .medium...: self = .default
        case .low...: self = .utility
        default: self = .background
        }
    }
}
