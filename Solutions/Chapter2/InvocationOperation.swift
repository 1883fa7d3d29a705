import Foundation
import Synchronization

/// A reason an invocation operation could not be made or could not hand back a result.
public enum InvocationError: Error, Equatable, Sendable {
    /// The operation was cancelled, so it has no result and never will.
    case cancelled
    /// The operation has not finished yet; ask again after it has.
    case notFinished
    /// No method with this name is in the table the operation was made from.
    case unknownMethod(String)
}

/// An operation that calls one method of an existing object with one argument when a queue runs it.
///
/// It is Swift's counterpart of `NSInvocationOperation`: instead of a selector it takes an
/// unapplied method reference such as `Pantry.count`, so no subclass is needed per task.
public final class InvocationOperation<Target, Argument, Output>: Operation,
    @unchecked Sendable  // the stored inputs are constants; `outcome` lives in a Mutex
where Target: AnyObject & Sendable, Argument: Sendable, Output: Sendable {
    /// An unapplied method of `Target` that takes an `Argument` and returns an `Output`.
    public typealias Method = @Sendable (Target) -> (Argument) throws -> Output

    private let target: Target
    private let method: Method
    private let argument: Argument
    /// What the method returned or threw; nil until `main()` has called it.
    private let outcome = Mutex<Result<Output, any Error>?>(nil)  // protected by its Mutex

    /// Creates an operation that will call `method` on `target` with `argument` when it runs.
    ///
    /// Nothing is called here: the method runs later, on the thread of the queue that runs the operation.
    public init(target: Target, method: @escaping Method, argument: Argument) {
        self.target = target
        self.method = method
        self.argument = argument
        super.init()
    }

    /// Creates an operation whose method is picked by `name` from `methods`, as from user input.
    ///
    /// - Throws: `InvocationError.unknownMethod(name)` when `methods` has no entry called `name`.
    public convenience init(
        target: Target, methodNamed name: String, in methods: [String: Method], argument: Argument
    ) throws(InvocationError) {
        guard let method = methods[name] else { throw .unknownMethod(name) }
        self.init(target: target, method: method, argument: argument)
    }

    /// Calls the method and keeps what it returned or threw; no error escapes.
    public override func main() {
        guard !isCancelled else { return }
        let result = Result { try method(target)(argument) }
        outcome.withLock { $0 = result }
    }

    /// Returns the method's return value, or throws why there is none.
    ///
    /// - Throws: `InvocationError.cancelled` if the operation was cancelled,
    ///   `InvocationError.notFinished` if the method has not returned yet,
    ///   or the error the method itself threw.
    public func result() throws -> Output {
        if isCancelled { throw InvocationError.cancelled }
        guard let outcome = outcome.withLock({ $0 }) else { throw InvocationError.notFinished }
        return try outcome.get()
    }
}
