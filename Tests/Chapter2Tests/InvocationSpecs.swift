import Chapter2
import Foundation
import KataTestSupport
import Testing

@Suite("An invocation operation calls an existing method when the queue runs it", .watched)
struct InvocationRunsOnTheQueue {
    // Hint: InvocationOperation.init and main(), "Running on the queue, not on the creator".
    // Which of the two calls the method?
    // Covers: C11
    // Paths: interference
    @Test(
        "two methods of one object become two operations; each runs on the queue and returns the result"
    )
    func runsOnTheQueue() async throws {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let counting = InvocationOperation(target: pantry, method: Pantry.count, argument: "flour")
        let shelving = InvocationOperation(target: pantry, method: Pantry.shelf, argument: "rice")
        pantry.created.open()

        #expect(
            pantry.calls.count == 0,
            """
            Creating the operations already called \(pantry.calls.timeline). An invocation operation \
            only remembers what to call; the queue calls it later, on its own thread.
            \(lesson.see("Running on the queue, not on the creator"))
            """)

        for operation in [counting, shelving] { queue.addOperation(operation) }
        await waitUntil("both operations to finish") { counting.isFinished && shelving.isFinished }

        let calls = pantry.calls.all
        #expect(
            calls.map(\.method).sorted() == ["count", "shelf"]
                && calls.allSatisfy { $0.onQueue && $0.afterCreation },
            """
            Expected count(flour) and shelf(rice), each called once inside an operation of the queue, \
            after creation returned; the calls were: \(pantry.calls.timeline).
            \(lesson.see("Running on the queue, not on the creator"))
            """)
        #expect(
            Answer(asking: counting) == .value(5) && Answer(asking: shelving) == .value(19),
            """
            Expected the methods' return values as results (5 and 19); result() \
            \(Answer(asking: counting)) and \(Answer(asking: shelving)).
            \(lesson.see("Running on the queue, not on the creator"))
            """)
    }
}

@Suite("Which method runs can be chosen at run time, by name", .watched)
struct ChoosingByName {
    // Hint: InvocationOperation.init(target:methodNamed:in:argument:), "Choosing the method
    // by name".
    // Covers: C12
    // Paths: values
    @Test(
        "a name from the menu picks that method, which the queue then runs",
        arguments: [
            ("count", "semolina", 8), ("shelf", "oats", 39),
        ])
    func knownName(name: String, item: String, expected: Int) async throws {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        let operation = try Pantry.Invocation(
            target: pantry, methodNamed: name, in: Pantry.menu, argument: item)
        pantry.created.open()
        queue.addOperation(operation)
        await waitUntil("the operation made from “\(name)” to finish") { operation.isFinished }

        let calls = pantry.calls.all
        #expect(
            calls.count == 1 && calls.first?.method == name && calls.first?.onQueue == true
                && calls.first?.afterCreation == true,
            """
            Expected exactly one call, \(name)(\(item)), on the queue after creation; \
            the calls were: \(pantry.calls.timeline).
            \(lesson.see("Choosing the method by name"))
            """)
        #expect(
            Answer(asking: operation) == .value(expected),
            """
            Expected result() to return \(expected), what \(name)(\(item)) returns; \
            it \(Answer(asking: operation)).
            \(lesson.see("Choosing the method by name"))
            """)
    }

    // Hint: InvocationOperation.init(target:methodNamed:in:argument:), "Choosing the method
    // by name". When does the caller learn that the name is wrong?
    // Covers: C12
    // Paths: values
    @Test(
        "a name that is not on the menu is an error at creation",
        arguments: ["", "Count", "delete", " count", "count "])
    func unknownName(name: String) async throws {
        let queue = OperationQueue()
        let pantry = Pantry(queue: queue)
        var thrown: (any Error)?
        do {
            let operation = try Pantry.Invocation(
                target: pantry, methodNamed: name, in: Pantry.menu, argument: "salt")
            // Run what was made anyway, so a late failure shows up too.
            pantry.created.open()
            queue.addOperation(operation)
            await waitUntil("the operation made from “\(name)” to finish") { operation.isFinished }
        } catch {
            thrown = error
        }
        #expect(
            (thrown as? InvocationError) == .unknownMethod(name),
            """
            Expected creating an operation from the unknown name “\(name)” to throw \
            InvocationError.unknownMethod("\(name)"); it \(thrown.map { "threw \($0)" } ?? "threw nothing").
            \(lesson.see("Choosing the method by name"))
            """)
        #expect(
            pantry.calls.count == 0,
            "No pantry method should run for an unknown name; calls: \(pantry.calls.timeline).")
    }
}
