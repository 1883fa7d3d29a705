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
