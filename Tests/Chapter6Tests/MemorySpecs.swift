import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("A printed job belongs to whoever keeps it", .watched)
struct MemorySpecs {
    /// How a job is done before the caller lets go of it.
    enum Exit: String, CaseIterable, Sendable {
        case printed = "a job that printed after its prerequisite"
        case cancelled = "a job cancelled, with its prerequisite, while the shop was paused"
    }

    /// Something only a job's printing closure holds.
    final class PrintCapture: Sendable {}

    /// Submits a proof and a final run that needs it to `shop`, lets both end as `exit` says and
    /// returns weak references to the two jobs and to what the final run's printing closure
    /// captured; nil when the jobs did not end (the issue is recorded).
    static func run(
        _ exit: Exit, _ shop: PrintShop, _ log: Recorder<String>
    ) async -> (jobs: [WeakReference<Operation>], capture: WeakReference<PrintCapture>)? {
        let capture = PrintCapture()
        if exit == .cancelled { shop.pause() }
        let proof = shop.submit("proof", urgency: .bulk) { log.record("proof") }
        let finalRun = shop.submit("final run", urgency: .rush, after: [proof]) {
            withExtendedLifetime(capture) {}
            log.record("final run")
        }
        if exit == .cancelled {
            proof.cancel()
            finalRun.cancel()
            shop.resume()
        }
        guard
            await waitUntil(
                "\(exit.rawValue) and its prerequisite to be done",
                hint: "Timeline: \(log.timeline)\n" + lesson.see("A printed job belongs to whoever keeps it"),
                { proof.isFinished && finalRun.isFinished })
        else { return nil }
        return ([WeakReference(proof), WeakReference(finalRun)], WeakReference(capture))
    }

    // The press lets go of a job once it is done; look at what else holds the jobs the shop
    // made: a list the shop keeps, or a completion block that captures its own job (Linux never
    // clears one).
    // Covers: C60, C81
    // Paths: memory, collaborators
    @Test(
        "once a job is done and the caller let go of it, the shop keeps nothing of it",
        arguments: Exit.allCases
    )
    func doneJobsAreFreed(_ exit: Exit) async {
        let shop = PrintShop()
        let log = Recorder<String>()
        guard let (jobs, capture) = await Self.run(exit, shop, log) else { return }

        func alive() -> String {
            let names = jobs.compactMap(\.value).map { $0.name ?? "a job" }
            let printing = capture.value == nil ? [] : ["what the final run's printing closure captured"]
            return (names + printing).joined(separator: ", ")
        }
        await waitUntil(
            "the jobs to be freed after \(exit.rawValue), the caller having let go (still alive: \(alive()))",
            hint: """
                The shop was still in use, its press had let go of both jobs, and the caller had \
                let go too, yet something still holds them. A history the shop keeps of every job \
                holds each one, its printing closure and its prerequisites for as long as the \
                shop lives; a completion block that captures its own job is a cycle that Linux \
                never breaks (it never clears the block). Keep nothing of a job after submit \
                returns: the caller keeps what it needs.
                \(lesson.see("A printed job belongs to whoever keeps it"))
                """
        ) { jobs.allSatisfy { $0.value == nil } && capture.value == nil }
        withExtendedLifetime(shop) {}
    }
}
