import Chapter2
import Foundation
import KataTestSupport
import Testing

/// Where to read more in this chapter's lesson.
let lesson = Lesson(chapter: 2)

/// What a `Pantry` method can throw.
enum PantryError: Error, Equatable, Sendable {
    case soldOut(String)
}

/// An ordinary class with ordinary methods: the existing object an invocation operation calls.
///
/// Each call is recorded with where it ran, so a spec can tell whether the queue ran it.
final class Pantry: Sendable {
    /// One call of a pantry method, as seen from inside the method.
    struct Call: Sendable, CustomStringConvertible {
        let method: String
        let item: String
        /// Whether the call ran inside an operation of the spec's queue.
        let onQueue: Bool
        /// Whether the spec had already got the operation back from its creation call.
        let afterCreation: Bool

        var description: String {
            "\(method)(\(item)) \(onQueue ? "on the queue" : "NOT on the queue")"
                + (afterCreation ? "" : ", during creation")
        }
    }

    typealias Invocation = InvocationOperation<Pantry, String, Int>

    /// The methods a user may pick by name.
    static let menu: [String: Invocation.Method] = [
        "count": Pantry.count, "shelf": Pantry.shelf, "restock": Pantry.restock,
    ]

    /// The queue the spec runs operations on.
    let queue: OperationQueue
    /// Opened by the spec once the creation call has returned.
    let created = Gate("creation returned")
    /// Every call, oldest first.
    let calls = Recorder<Call>()
    private let duringCall = Protected<(@Sendable () -> Void)?>(nil)

    init(queue: OperationQueue) {
        self.queue = queue
    }

    /// Has the next call made after creation run `body` inside the method, once.
    func whileRunning(_ body: @escaping @Sendable () -> Void) {
        duringCall.withValue { $0 = body }
    }

    /// Returns how many letters `item` has.
    func count(_ item: String) -> Int {
        arrive("count", item)
        return item.count
    }

    /// Returns the shelf number of `item`: its letters' scalar values added up, modulo 100.
    func shelf(_ item: String) -> Int {
        arrive("shelf", item)
        return item.unicodeScalars.reduce(0) { $0 + Int($1.value) } % 100
    }

    /// Always throws: the item is sold out.
    func restock(_ item: String) throws -> Int {
        arrive("restock", item)
        throw PantryError.soldOut(item)
    }

    private func arrive(_ method: String, _ item: String) {
        let afterCreation = created.isOpen
        calls.record(
            Call(
                method: method, item: item, onQueue: OperationQueue.current === queue,
                afterCreation: afterCreation))
        // Only a call the queue makes should act on the operation; one made during creation
        // has no operation to act on yet.
        // The body is taken out first, so a body that calls back into the pantry cannot loop.
        guard afterCreation,
            let body = duringCall.withValue({ body in
                defer { body = nil }
                return body
            })
        else { return }
        body()
    }
}

/// What `result()` gave: a value or an error, in a form that compares and prints well.
enum Answer: Equatable, Sendable, CustomStringConvertible {
    case value(Int)
    case invocationError(InvocationError)
    case pantryError(PantryError)
    case otherError(String)

    init(asking operation: InvocationOperation<some AnyObject & Sendable, some Sendable, Int>) {
        do {
            self = .value(try operation.result())
        } catch let error as InvocationError {
            self = .invocationError(error)
        } catch let error as PantryError {
            self = .pantryError(error)
        } catch {
            self = .otherError("\(error)")
        }
    }

    var description: String {
        switch self {
        case .value(let value): "returned \(value)"
        case .invocationError(let error): "threw InvocationError.\(error)"
        case .pantryError(let error): "threw PantryError.\(error)"
        case .otherError(let error): "threw \(error)"
        }
    }
}

/// A queue that runs each operation it is given to its end before `addOperation` returns, as
/// any queue that is free at that moment may.
final class EagerQueue: OperationQueue, @unchecked Sendable {  // adds only a locked Recorder
    /// Every operation handed to the queue, in order.
    let handedIn = Recorder<Operation>()

    override func addOperation(_ op: Operation) {
        handedIn.record(op)
        super.addOperation(op)
        _ = settles(within: Bound.standard) { op.isFinished }
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        ops.forEach(handedIn.record)
        super.addOperations(ops, waitUntilFinished: wait)
        _ = settles(within: Bound.standard) { ops.allSatisfy(\.isFinished) }
    }
}

/// A queue that runs a body of the spec's inside the next `addOperation`, before the queue takes
/// the operation: the moment a caller's `submit(to:)` hands its operation over.
final class HandOverQueue: OperationQueue, @unchecked Sendable {  // adds only a Protected body
    private let duringHandOver = Protected<(@Sendable () -> Void)?>(nil)

    /// Has the next hand-over run `body` once, before the queue takes the operation.
    func whileHandingOver(_ body: @escaping @Sendable () -> Void) {
        duringHandOver.withValue { $0 = body }
    }

    override func addOperation(_ op: Operation) {
        takeBody()?()
        super.addOperation(op)
    }

    override func addOperations(_ ops: [Operation], waitUntilFinished wait: Bool) {
        takeBody()?()
        super.addOperations(ops, waitUntilFinished: wait)
    }

    private func takeBody() -> (@Sendable () -> Void)? {
        duringHandOver.withValue { body in
            defer { body = nil }
            return body
        }
    }
}

/// Calls `batch.submit(to: queue)` on a thread of its own and waits, within a bound, for the
/// operation it returns.
///
/// A `submit(to:)` that waits for its pieces would otherwise hold one of the few threads every
/// async spec of the run shares, and on a suspended queue hold it for good: the whole run would
/// stop, instead of this one spec failing and saying why.
///
/// - Parameter handedOver: Runs on that thread with the operation as soon as `submit(to:)` returns
///   it, before the spec's task is woken (which may take a while when the pieces hold Dispatch's
///   threads).
/// - Returns: The batch's operation, or nil (with an issue recorded) if `submit(to:)` did not return.
func submitOnItsOwnThread(
    _ batch: Batch,
    to queue: OperationQueue,
    isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation,
    handedOver: @escaping @Sendable (Operation) -> Void = { _ in }
) async -> Operation? {
    await callOnItsOwnThread(
        "submit(to:)",
        hint: """
            submit(to:) hands the batch's operation to the queue and returns it at once; the caller \
            waits for the pieces, if at all, through that operation (a dependent, a completion \
            block). One that waits inside submit(to:) blocks its caller for as long as the pieces \
            take, and for good when the queue cannot run them yet.
            \(lesson.see("Block operations"))
            """,
        sourceLocation: sourceLocation
    ) {
        let operation = batch.submit(to: queue)
        handedOver(operation)
        return operation
    }
}
