import Chapter12
import Foundation
import KataTestSupport
import Testing

extension Chapter12Specs {
    @Suite("Each stage keeps to its own width")
    struct WidthSpecs {
        // Look at what bounds the downloads in `ImagePipeline`, and at when a download's operation
        // finishes: while its fetch is under way, or when the fetch has ended? Lesson: "A width per
        // stage" and Chapter 8.
        // Covers: C86, C53, C61
        // Paths: values
        @Test(
            "no more fetches run at once than the fetch width, and the next starts when one ends",
            arguments: [1, 3, 5])
        func fetchesStayWithinTheirWidth(_ width: Int) async {
            let widths = StageWidths(fetches: width, decodes: 2, resizes: 2)
            let studio = Studio(holding: [.fetch], widths: widths)
            defer { studio.releaseAll() }
            let list = ListView(ImagePipeline(fetcher: studio, decoder: studio, resizer: studio, widths: widths))
            // One more row than the widest case, so that one always waits for a slot.
            let images = ["a", "b", "c", "d", "e", "f"]
            for (row, image) in images.enumerated() { await list.show(image, in: row) }
            let tooMany = {
                studio.peak(.fetch) > width
                    ? "\(studio.peak(.fetch)) fetches ran at once (\(studio.began(.fetch).joined(separator: ", ")) began)"
                    : nil
            }
            let hint = lesson.see("A width per stage")
            guard
                await waitUntil(
                    "\(width) fetch(es) to begin", hint: hint, givingUpWhen: tooMany,
                    { studio.running(.fetch).count == width })
            else { return }
            let extra = await comesTrue(within: window) { studio.peak(.fetch) > width }
            #expect(
                !extra,
                """
                With a fetch width of \(width), \(studio.peak(.fetch)) fetches ran at once while none had \
                ended. An operation that only launches the download and returns frees its slot at once.
                \(hint)
                """)
            // End the downloads one by one: each time, the next waiting row's fetch starts.
            for ended in 1...images.count {
                guard let oldest = studio.running(.fetch).first else { break }
                studio.release(oldest)
                let begun = min(images.count, width + ended)
                guard
                    await waitUntil(
                        "the fetch of \(oldest) to end and \(begun) fetches in all to have begun", hint: hint,
                        givingUpWhen: tooMany,
                        { !studio.running(.fetch).contains(oldest) && studio.began(.fetch).count >= begun })
                else { return }
            }
            await waitUntil("every row to get its thumbnail", hint: hint) { list.deliveries.count == images.count }
            #expect(
                studio.peak(.fetch) <= width,
                "With a fetch width of \(width), \(studio.peak(.fetch)) fetches ran at once. \(hint)")
        }
    }
}
