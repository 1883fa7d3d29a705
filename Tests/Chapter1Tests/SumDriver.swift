import Chapter1
import KataTestSupport
import Testing

/// Paces the recalculations of one spec and records everything they report.
///
/// Each recalculation run gets its own `Pacer`: a sum stops at every number until the spec
/// lets it go on, so "run 1 is at its last number while run 2 starts" happens every time.
final class SumDriver: Sendable {
    /// Every event the sums reported, in order.
    let events = Recorder<SumEvent>()
    private let pacers = Protected<[Int: Pacer]>([:])
    private let isFree = Protected(false)

    /// Creates a driver; when `paced` is false, no sum ever waits.
    init(paced: Bool = true) {
        isFree.withValue { $0 = !paced }
    }

    /// The probe to hand to `ListAdder` or `AdderOperation`.
    var probe: @Sendable (SumEvent) -> Void {
        { [self] event in
            events.record(event)
            if case .willAdd(let run, _) = event {
                pacer(run).step()
            }
        }
    }

    /// The pacer that holds recalculation `run`.
    func pacer(_ run: Int) -> Pacer {
        let free = isFree.value
        return pacers.withValue { pacers in
            if let pacer = pacers[run] { return pacer }
            let pacer = Pacer()
            if free { pacer.releaseAll() }
            pacers[run] = pacer
            return pacer
        }
    }

    /// Lets every present and future sum run to its end; call it when a spec is done.
    func releaseAll() {
        isFree.withValue { $0 = true }
        for pacer in pacers.value.values { pacer.releaseAll() }
    }

    /// How many numbers run `run` reported adding when it stopped, if it stopped.
    func numbersAdded(by run: Int) -> Int? {
        for case .stopped(run, let added) in events.all { return added }
        return nil
    }

    /// Whether the owner has received the result of run `run`.
    func wasDelivered(_ run: Int) -> Bool {
        events.contains(.delivered(run: run))
    }
}

/// One redraw of the total, as the screen saw it.
struct Redraw: Sendable, Equatable, CustomStringConvertible {
    let text: String
    let onMainQueue: Bool

    var description: String { "“\(text)” \(onMainQueue ? "on" : "off") the main queue" }
}

extension ListAdder {
    /// Records every redraw of the total into `screen`.
    func draw(into screen: Recorder<Redraw>) {
        onTotalChange = { text in screen.record(Redraw(text: text, onMainQueue: MainQueue.isCurrent)) }
    }
}

let lesson = Lesson(chapter: 1)

/// Every Chapter 1 suite, run one spec at a time.
///
/// A paced sum blocks a thread of the operation queue. Several specs doing that at once leave
/// Dispatch short of threads on Linux, and it adds more only slowly.
@Suite(.serialized)
enum Chapter1Specs {}
