/// A moment in the life of one recalculation, reported so that the pace can be set and watched.
///
/// The app passes a probe that ignores these events. A spec passes one that records them and
/// holds the sum at chosen numbers, so that every interleaving it needs happens on purpose.
public enum SumEvent: Sendable, Equatable, CustomStringConvertible {
    /// Recalculation `run` is about to add the number at `index`.
    case willAdd(run: Int, index: Int)
    /// Recalculation `run` stopped after adding `added` numbers: all of them, or fewer if cancelled.
    case stopped(run: Int, added: Int)
    /// The list's owner received the result of recalculation `run` and decided what to show.
    case delivered(run: Int)

    /// A short description for failure messages, such as `run 2 adds #1`.
    public var description: String {
        switch self {
        case .willAdd(let run, let index): "run \(run) adds #\(index)"
        case .stopped(let run, let added): "run \(run) stopped after \(added)"
        case .delivered(let run): "run \(run) delivered"
        }
    }
}

/// A probe that reports nothing: what the app uses when nobody is watching.
public let silentProbe: @Sendable (SumEvent) -> Void = { _ in }
