import Foundation

/// An asynchronous operation that says hello, pauses, and says goodbye.
///
/// The pause is a hook: pass a closure that blocks for as long as the "processing" should take.
open class GreetingOperation: AsyncOperation, @unchecked Sendable {  // the thread is detached, so it is safe
    /// Who is greeted.
    public let person: String
    private let queue: DispatchQueue
    private let pause: @Sendable () -> Void
    private var words: String?

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

    /// The whole greeting once the operation finished.
    public var greeting: String? {
        words
    }

    /// Says hello, pauses, says goodbye, and finishes; `start()` already put us on our own thread.
    open override func execute() {
        if !isCancelled {
            let hello = "Hello, \(person)!"
            pause()  // simulates the processing
            words = "\(hello) Goodbye, \(person)!"
            finish()
        }
    }
}
