import Foundation
import Synchronization

/// An asynchronous operation that says hello, pauses, and says goodbye on a queue of its own.
///
/// The pause is a hook: pass a closure that blocks for as long as the "processing" should take.
/// A pause that can be interrupted should end when the operation is cancelled; the work checks
/// `isCancelled` once it is over.
open class GreetingOperation: AsyncOperation, @unchecked Sendable {  // stored properties are immutable or a Mutex
    /// Who is greeted.
    public let person: String
    private let queue: DispatchQueue
    private let pause: @Sendable () -> Void
    private let words = Mutex<String?>(nil)  // the finished greeting; written once, before finishing

    /// Creates a greeting for `person` whose work runs on `queue` and calls `pause` between the two lines.
    public init(
        person: String,
        queue: DispatchQueue = .global(),
        pause: @escaping @Sendable () -> Void = {}
    ) {
        self.person = person
        self.queue = queue
        self.pause = pause
        super.init()
    }

    /// The whole greeting once the work completed; nil before that, or when the work stopped because
    /// the operation was cancelled.
    public var greeting: String? {
        words.withLock { $0 }
    }

    /// Sends the greeting to `queue` and returns at once.
    open override func execute() {
        queue.async { self.greet() }
    }

    /// Does the work; every way out of it, cancelled or not, finishes the operation.
    private func greet() {
        defer { finish() }
        guard !isCancelled else { return }
        let hello = "Hello, \(person)!"
        pause()
        guard !isCancelled else { return }  // a cancel that comes after this check is too late to stop the greeting
        let greeting = "\(hello) Goodbye, \(person)!"
        words.withLock { $0 = greeting }
    }
}
