import Chapter12
import Foundation
import KataTestSupport
import Testing

/// Where this chapter's failure messages point.
let lesson = Lesson(chapter: 12)

/// Every Chapter 12 suite, run one spec at a time.
///
/// The specs that hold a decode or a resize block threads of the stage queues. Other specs
/// running beside them found Dispatch short of threads on Linux, which adds more only after
/// about a second: their bounded waits then ran out on correct code.
@Suite(.serialized, .watched)
enum Chapter12Specs {}

/// How long a spec waits for what correct code does within milliseconds.
let patience = Bound.scaled(.milliseconds(500))

/// How long a spec watches for something that correct code never does.
let window = Bound.scaled(.milliseconds(60))

/// The three stages of the pipeline, in their order.
enum Stage: String, Sendable, CustomStringConvertible, CaseIterable {
    case fetch, decode, resize

    var description: String { rawValue }

    /// The stage before this one, if any.
    var previous: Stage? {
        switch self {
        case .fetch: nil
        case .decode: .fetch
        case .resize: .decode
        }
    }
}

/// The error a studio stage throws when it is told to fail an image.
struct StudioError: Error, Equatable, CustomStringConvertible {
    let stage: Stage
    let image: String

    var description: String { "the \(stage) of \(image) failed" }
}

/// The address of the image called `name`.
func address(_ name: String) -> URL {
    URL(string: "https://photos.example/\(name)")!
}

/// Plays all three stages for a spec: records what each does, holds what the spec asks it to hold.
///
/// A held fetch suspends without a thread until the spec releases its image or the fetching
/// task is cancelled. A held decode or resize blocks its thread, but only while its stage runs
/// within `widths`: one beyond the width passes straight through (and the spec sees the peak),
/// so broken code never stalls the test process. Every hold gives up after a bound.
final class Studio: ImageFetcher, ImageDecoder, ImageResizer, @unchecked Sendable {  // `state` under `condition`
    private struct State {
        var running: [Stage: [String]] = [:]
        var peak: [Stage: Int] = [:]
        var released: Set<String> = []
        var healed: Set<String> = []
        var releasedAll = false
        var calledInATask: Set<Stage> = []
        var bitmaps: [WeakBitmap] = []
        var queues: [Stage: WeakReference<OperationQueue>] = [:]
        var operations: [(label: String, operation: WeakReference<Operation>)] = []
    }
    private struct WeakBitmap {
        let label: String
        weak var bitmap: Bitmap?
    }

    private let condition = NSCondition()
    private var state = State()  // protected by condition
    /// Where held fetches wait, suspended.
    private let holds = Holds()
    private let held: Set<Stage>
    private let heldFetches: Set<String>
    private let failing: [String: Stage]
    private let widths: StageWidths
    /// What happened, in order: `beach fetch began`, `beach fetch ended`, `beach fetch cancelled`…
    let events = Recorder<String>()

    /// Creates a studio that holds the stages in `held`, and the fetches of the images in
    /// `heldFetches` as well, and fails `failing[image]` for those images.
    init(
        holding held: Set<Stage> = [], holdingFetchesOf heldFetches: Set<String> = [],
        failing: [String: Stage] = [:], widths: StageWidths = StageWidths()
    ) {
        self.held = held
        self.heldFetches = heldFetches
        self.failing = failing
        self.widths = widths
    }

    // MARK: The stages

    func fetch(_ url: URL) async throws -> Data {
        let image = url.lastPathComponent
        begin(.fetch, image)
        do {
            if held.contains(.fetch) || heldFetches.contains(image) { try await holds.wait(for: image) }
            try check(.fetch, image)
        } catch {
            end(.fetch, image, error is CancellationError ? "cancelled" : "failed")
            throw error
        }
        end(.fetch, image, "ended")
        return Data(image.utf8)
    }

    func decode(_ data: Data, from url: URL) throws -> Bitmap {
        let image = String(decoding: data, as: UTF8.self)
        try work(.decode, image)
        return keep(Bitmap(name: image, width: 4000, height: 3000), as: "\(image) at full size")
    }

    func resize(_ bitmap: Bitmap) throws -> Bitmap {
        try work(.resize, bitmap.name)
        return keep(Bitmap(name: bitmap.name, width: 120, height: 90), as: "\(bitmap.name)'s thumbnail")
    }

    // MARK: What the spec controls and sees

    /// Lets the held stages of `image` go on, now and from now on.
    func release(_ image: String) {
        condition.withLock {
            state.released.insert(image)
            condition.broadcast()
        }
        holds.release(image)
    }

    /// Lets every stage of `image` succeed from now on, whatever `failing` says.
    func heal(_ image: String) {
        condition.withLock { _ = state.healed.insert(image) }
    }

    /// Lets every held stage go on, now and from now on.
    func releaseAll() {
        condition.withLock {
            state.releasedAll = true
            condition.broadcast()
        }
        holds.releaseAll()
    }

    /// The images whose `stage` has begun, in order.
    func began(_ stage: Stage) -> [String] {
        let suffix = " \(stage) began"
        return events.all.filter { $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }
    }

    /// Whether `event` (`beach decode began`) was recorded.
    func saw(_ event: String) -> Bool {
        events.contains(event)
    }

    /// The images whose `stage` is running now.
    func running(_ stage: Stage) -> [String] {
        condition.withLock { state.running[stage] ?? [] }
    }

    /// Whether a run of `stage` was called from a Swift task rather than from an operation (the
    /// studio never holds those).
    func calledInATask(_ stage: Stage) -> Bool {
        condition.withLock { state.calledInATask.contains(stage) }
    }

    /// The most runs of `stage` that were ever under way at once.
    func peak(_ stage: Stage) -> Int {
        condition.withLock { state.peak[stage] ?? 0 }
    }

    /// The bitmaps the studio made that are still in memory.
    var bitmapsInMemory: [String] {
        condition.withLock { state.bitmaps.filter { $0.bitmap != nil }.map(\.label) }
    }

    /// How many ready operations wait, not started yet, in the queue on which `stage` last ran;
    /// nil when it never ran inside an operation queue (a design may keep waiting rows elsewhere).
    func ready(_ stage: Stage) -> Int? {
        guard let queue = condition.withLock({ state.queues[stage]?.value }) else { return nil }
        return queue.operations.filter { $0.isReady && !$0.isExecuting && !$0.isFinished }.count
    }

    /// The operations that wait, not started yet, in the queue on which `stage` last ran, each with
    /// the priority it has now; empty when that stage never ran inside an operation queue.
    func waiting(_ stage: Stage) -> [(operation: WeakReference<Operation>, priority: Operation.QueuePriority)] {
        guard let queue = condition.withLock({ state.queues[stage]?.value }) else { return [] }
        return queue.operations.filter { !$0.isExecuting && !$0.isFinished }.map {
            (operation: WeakReference<Operation>($0), priority: $0.queuePriority)
        }
    }

    /// The operations the studio saw in a decode or resize queue that are still in memory.
    var operationsInMemory: [String] {
        condition.withLock { state.operations.filter { $0.operation.value != nil }.map(\.label) }
    }

    // MARK: Inside

    private func begin(_ stage: Stage, _ image: String) {
        condition.withLock {
            state.running[stage, default: []].append(image)
            state.peak[stage] = max(state.peak[stage] ?? 0, state.running[stage]!.count)
            events.record("\(image) \(stage) began")
        }
    }

    private func end(_ stage: Stage, _ image: String, _ how: String) {
        condition.withLock {
            if let index = state.running[stage]?.firstIndex(of: image) {
                state.running[stage]!.remove(at: index)
            }
            events.record("\(image) \(stage) \(how)")
        }
    }

    private func check(_ stage: Stage, _ image: String) throws {
        guard failing[image] == stage, !condition.withLock({ state.healed.contains(image) }) else { return }
        throw StudioError(stage: stage, image: image)
    }

    /// A blocking stage: held at most within its width, and for a bounded time.
    private func work(_ stage: Stage, _ image: String) throws {
        notice(OperationQueue.current, running: stage, for: image)
        begin(stage, image)
        // A stage called from a task runs on a thread of Swift's cooperative pool, which the
        // specs' own tasks need: holding it could starve them, so it passes straight through
        // (and a width the design does not keep then shows as a peak at once).
        let inATask = Self.isInATask
        if inATask { condition.withLock { _ = state.calledInATask.insert(stage) } }
        if held.contains(stage) && !inATask {
            let width = stage == .decode ? widths.decodes : widths.resizes
            let deadline = Date.now.addingTimeInterval((patience * 3).timeInterval)
            condition.withLock {
                while !state.releasedAll && !state.released.contains(image)
                    && (state.running[stage]?.count ?? 0) <= width
                {
                    if !condition.wait(until: deadline) { break }
                }
            }
        }
        do {
            try check(stage, image)
        } catch {
            end(stage, image, "failed")
            throw error
        }
        end(stage, image, "ended")
    }

    /// Whether the caller runs inside a Swift task.
    private static var isInATask: Bool {
        withUnsafeCurrentTask { $0 != nil }
    }

    /// Remembers, weakly, the queue that runs `stage` and every operation in it now, running or waiting.
    ///
    /// The queue's list of operations is the one public way to reach the operations themselves,
    /// which the specs of "Nothing kept" watch as well as what they carry.
    private func notice(_ queue: OperationQueue?, running stage: Stage, for image: String) {
        guard let queue else { return }
        let seen = queue.operations.map {
            (
                label: "a \(type(of: $0)) seen in the \(stage) queue when \(image)'s \(stage) began",
                operation: WeakReference<Operation>($0)
            )
        }
        condition.withLock {
            state.queues[stage] = WeakReference(queue)
            state.operations += seen
        }
    }

    private func keep(_ bitmap: Bitmap, as label: String) -> Bitmap {
        condition.withLock { state.bitmaps.append(WeakBitmap(label: label, bitmap: bitmap)) }
        return bitmap
    }
}

/// What a row's callback received.
struct Delivery: Sendable, CustomStringConvertible {
    let row: Int
    /// Which request of the row it answered: 1 for the first, 2 for the next…
    let request: Int
    /// `beach's thumbnail, 120×90` or the error.
    let outcome: String
    let onMainQueue: Bool

    var description: String {
        "row \(row) (request \(request)) got \(outcome)\(onMainQueue ? "" : ", off the main queue")"
    }
}

/// A cell of the list: what a real list's callback would capture to show the thumbnail in.
final class Cell: Sendable {
    let name: String
    init(name: String) { self.name = name }
}

/// The list view of the specs: it calls the pipeline on the main queue, as a real one does.
///
/// It keeps its cells only weakly, so whatever keeps one alive is the pipeline.
final class ListView: Sendable {
    let pipeline: ImagePipeline
    let deliveries = Recorder<Delivery>()
    private let requests = Protected<[Int: Int]>([:])
    private let cells = Protected<[WeakCell]>([])
    private struct WeakCell: Sendable {
        let name: String
        weak var cell: Cell?
    }

    init(_ pipeline: ImagePipeline) {
        self.pipeline = pipeline
    }

    /// Asks for `image` in `row`, on screen (`visible`) or about to be (prefetching).
    func show(_ image: String, in row: Int, visible: Bool = true) async {
        await MainQueue.run(calling, ask(for: image, in: row, visible: visible))
    }

    /// Asks for `image` in `row` on the main queue once `gate` opens, holding the main queue until then.
    func show(_ image: String, in row: Int, visible: Bool = true, once gate: Gate) {
        MainQueue.hold(until: gate, then: ask(for: image, in: row, visible: visible))
    }

    /// The list view's call that asks for `image` in `row`, to run on the main queue.
    private func ask(for image: String, in row: Int, visible: Bool) -> @Sendable () -> Void {
        let number = requests.withValue { requests in
            requests[row, default: 0] += 1
            return requests[row]!
        }
        let cell = Cell(name: "row \(row)'s cell for \(image) (request \(number))")
        cells.withValue { $0.append(WeakCell(name: cell.name, cell: cell)) }
        let deliveries = deliveries
        return { [pipeline] in
            pipeline.request(row: row, url: address(image), visible: visible) { [cell] result in
                let outcome =
                    switch result {
                    case .success(let bitmap): "\(bitmap.name)'s thumbnail, \(bitmap.width)×\(bitmap.height)"
                    case .failure(let error): "the error “\(error)”"
                    }
                withExtendedLifetime(cell) {}
                deliveries.record(
                    Delivery(row: row, request: number, outcome: outcome, onMainQueue: MainQueue.isCurrent))
            }
        }
    }

    /// Tells the pipeline that `row` scrolled into view.
    func scrollIntoView(_ row: Int) async {
        await MainQueue.run(calling) { [pipeline] in pipeline.rowBecameVisible(row) }
    }

    /// Tells the pipeline, in one pass on the main queue, that each of `rows` left the screen, in order.
    func scrollAway(_ rows: Int...) async {
        await MainQueue.run(calling) { [pipeline] in rows.forEach(pipeline.rowLeftScreen) }
    }

    /// Tells the pipeline on the main queue that `row` left the screen once `gate` opens, holding
    /// the main queue until then.
    func scrollAway(_ row: Int, once gate: Gate) {
        MainQueue.hold(until: gate) { [pipeline] in pipeline.rowLeftScreen(row) }
    }

    /// Why no stage of `row` can begin any more: its first request was already answered; nil
    /// while one may. For a spec that has asked for the row once.
    func wasAnswered(_ row: Int) -> String? {
        deliveries(to: row).first.map { "\($0) first, so none of its stages could still begin" }
    }

    /// What the callbacks of `row` received, in order.
    func deliveries(to row: Int) -> [Delivery] {
        deliveries.all.filter { $0.row == row }
    }

    /// The cells that are still in memory.
    var cellsInMemory: [String] {
        cells.value.filter { $0.cell != nil }.map(\.name)
    }

    /// The thumbnail outcome expected for `image`.
    static func thumbnail(of image: String) -> String {
        "\(image)'s thumbnail, 120×90"
    }
}

/// What a wait for the list view's call names when the call never returns.
private let calling = "the list view's call on the main queue to return"

/// Waits until `count` rows wait, ready, for `stage`, as far as the spec can see: in the queue on
/// which that stage runs. A design that keeps waiting rows in a list of its own leaves no trace
/// there; the wait then ends after `window`.
func waitUntil(_ count: Int, rowsWaitFor stage: Stage, in studio: Studio) async {
    await MainQueue.drain()
    _ = await comesTrue(within: window) { (studio.ready(stage) ?? 0) >= count }
}

/// Waits until a result is on its way to the main queue, as far as the spec can see: the main
/// operation queue holds an operation. A design that hops with `DispatchQueue.main` leaves no
/// trace there; the wait then ends after `window`.
func resultOnItsWayToTheMainQueue() async {
    _ = await comesTrue(within: window) { OperationQueue.main.operationCount > 0 }
}

/// A fetcher that hands every fetch to a studio: a spec that gives the pipeline this one, and
/// keeps only a weak reference to it, sees whether anything still holds the pipeline's fetches.
final class FetcherOfTheStudio: ImageFetcher {
    let studio: Studio

    init(_ studio: Studio) {
        self.studio = studio
    }

    func fetch(_ url: URL) async throws -> Data {
        try await studio.fetch(url)
    }
}
