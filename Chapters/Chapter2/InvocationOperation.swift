import Foundation

/// A reason an invocation operation could not be made or could not hand back a result.
public enum InvocationError: Error, Equatable, Sendable {
    /// The operation was cancelled, so it has no result and never will.
    case cancelled
    /// The operation has not finished yet; ask again after it has.
    case notFinished
    /// No method with this name is in the table the operation was made from.
    case unknownMethod(String)
}

/// An operation that calls one method of an existing object with one argument.
///
/// First attempt: it works out the answer straight away, so the result is ready whenever
/// anyone asks.
public final class InvocationOperation<Target, Argument, Output>: Operation,
    @unchecked Sendable  // it only holds the answer, which is set once in init
where Target: AnyObject & Sendable, Argument: Sendable, Output: Sendable {
    /// An unapplied method of `Target` that takes an `Argument` and returns an `Output`.
    public typealias Method = @Sendable (Target) -> (Argument) throws -> Output

    private let answer: Output?

    /// Creates an operation for `method` on `target` with `argument`.
    public init(target: Target, method: @escaping Method, argument: Argument) {
        // Do the work now; then the result is ready before the queue even gets to it.
        answer = try? method(target)(argument)
        super.init()
    }

    /// Creates an operation whose method is picked by `name` from `methods`.
    public convenience init(
        target: Target, methodNamed name: String, in methods: [String: Method], argument: Argument
    ) throws(InvocationError) {
        // The names come from our own menu, so a lookup miss should not happen; if it does,
        // the operation simply has no answer.
        let method = methods[name] ?? { _ in { _ in throw InvocationError.unknownMethod(name) } }
        self.init(target: target, method: method, argument: argument)
    }

    /// Nothing left to do here: the answer was worked out in init.
    public override func main() {}

    /// Returns the answer.
    public func result() throws -> Output {
        guard let answer else { throw InvocationError.notFinished }
        return answer
    }
}
