import Foundation

/// The engine's unit of work: renders one image on an operation queue.
public final class ExportOperation: Operation, @unchecked Sendable {  // `outcome` is only touched under `lock`
    /// The image this operation exports.
    public let image: String
    private let renderer: any Renderer
    private let lock = NSLock()
    private var outcome: Result<Export, any Error>?  // protected by lock

    public init(name: String, renderer: any Renderer) {
        self.image = name
        self.renderer = renderer
        super.init()
    }

    /// What the render produced; nil until the operation has run, and for good if it was
    /// cancelled before it started.
    public var result: Result<Export, any Error>? {
        lock.withLock { outcome }
    }

    public override func main() {
        guard !isCancelled else { return }
        let rendered = Result { Export(name: image, bytes: try renderer.render(image)) }
        lock.withLock { outcome = rendered }
    }
}
