import Foundation

/// One row's whole job: fetch its image, decode it, shrink it, hand the thumbnail over.
final class RowOperation: Operation, @unchecked Sendable {  // configured before it is queued
    let row: Int
    let url: URL
    private let fetcher: any ImageFetcher
    private let decoder: any ImageDecoder
    private let resizer: any ImageResizer
    private let deliver: @Sendable (Result<Bitmap, any Error>) -> Void
    /// Set when the row scrolls away, so the work can stop.
    var leftScreen = false

    init(
        row: Int, url: URL, fetcher: any ImageFetcher, decoder: any ImageDecoder,
        resizer: any ImageResizer, deliver: @escaping @Sendable (Result<Bitmap, any Error>) -> Void
    ) {
        self.row = row
        self.url = url
        self.fetcher = fetcher
        self.decoder = decoder
        self.resizer = resizer
        self.deliver = deliver
        super.init()
    }

    override func main() {
        // main() cannot await, so the download and the rest run in a task.
        Task {
            guard let data = try? await fetcher.fetch(url),
                let bitmap = try? decoder.decode(data, from: url),
                let thumbnail = try? resizer.resize(bitmap)
            else { return }
            deliver(.success(thumbnail))
        }
    }
}
