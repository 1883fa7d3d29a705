import Foundation
import Synchronization

/// The app's async export API, on top of the operation-based engine.
public final class Exporter: Sendable {
    /// The engine's queue; every export runs on it.
    public let queue: OperationQueue
    private let renderer: any Renderer
    /// Every export made so far, for the diagnostics screen.
    private let made = Mutex<[ExportOperation]>([])

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
        // The screens are async now; the engine's entry point still waits.
        try exportAndWait(name)
    }

    /// The engine's synchronous entry point, from before the app had async code.
    private func exportAndWait(_ name: String) throws -> Export {
        let operation = ExportOperation(name: name, renderer: renderer)
        made.withLock { $0.append(operation) }
        queue.addOperations([operation], waitUntilFinished: true)
        return try operation.result!.get()
    }
}
