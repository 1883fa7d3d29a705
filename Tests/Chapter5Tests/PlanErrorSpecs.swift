import Chapter5
import Foundation
import KataTestSupport
import Testing

/// A plan that names a step twice or needs a step it does not hold, and the error it deserves.
struct UnsoundPlan: Sendable, CustomTestStringConvertible {
    let shape: Shape
    let error: BuildError

    var testDescription: String { shape.name }

    static let all: [UnsoundPlan] = [
        UnsoundPlan(
            shape: Shape(
                name: "two steps called “compile”",
                nodes: [
                    Node("fetch"), Node("compile", needs: ["fetch"]),
                    Node("compile", needs: ["fetch"], queue: 1), Node("link", needs: ["compile"]),
                ]
            ),
            error: .duplicateStep("compile")
        ),
        UnsoundPlan(
            shape: Shape(
                name: "two steps called “lint” that no step needs",
                nodes: [
                    Node("fetch"), Node("lint", needs: ["fetch"]),
                    Node("lint", needs: ["fetch"], queue: 1),
                ]
            ),
            error: .duplicateStep("lint")
        ),
        UnsoundPlan(
            shape: Shape(
                name: "“link” needs a “compile” the plan does not hold",
                nodes: [
                    Node("fetch"), Node("link", needs: ["fetch", "compile"], queue: 1),
                    Node("test", needs: ["link"]),
                ]
            ),
            error: .unknownStep("compile", neededBy: "link")
        ),
        // The missing title comes first among the needs, and the repeated title is listed far
        // from its twin: a check of the last need only, or of neighbours only, misses them.
        UnsoundPlan(
            shape: Shape(
                name: "“test” needs a “lint” the plan does not hold, before a “fetch” it does",
                nodes: [Node("fetch"), Node("test", needs: ["lint", "fetch"], queue: 1)]
            ),
            error: .unknownStep("lint", neededBy: "test")
        ),
        UnsoundPlan(
            shape: Shape(
                name: "two steps called “fetch”, listed apart",
                nodes: [
                    Node("fetch"), Node("compile", needs: ["fetch"], queue: 1),
                    Node("link", needs: ["compile"]), Node("fetch", queue: 1),
                ]
            ),
            error: .duplicateStep("fetch")
        ),
    ]
}

@Suite("A plan with a repeated or missing step is refused before anything is enqueued", .watched)
struct PlanErrorSpecs {
    // BuildPlan.start(): what happens to a title used twice (needed or not), or needed but held
    // by no step?
    // See "Refuse cycles before you enqueue".
    // Covers: C38
    // Paths: values
    @Test(
        "start() throws the plan's error and neither wires nor enqueues anything",
        arguments: UnsoundPlan.all)
    func unsoundPlanIsRefused(example: UnsoundPlan) async throws {
        let recorder = Recorder<Event>()
        let build = Build(example.shape, recorder: recorder)
        let hint = lesson.see("Refuse cycles before you enqueue")

        // No plan here can deadlock start(): give a busy machine the standard bound.
        guard let outcome = await attempt(build.plan, timeout: Bound.standard) else { return }
        let enqueued = build.queues.flatMap(\.handoffs).map(\.title)
        let thrown: BuildError? =
            switch outcome {
            case .success: nil
            case .failure(let error): error
            }

        #expect(
            thrown == example.error,
            """
            start() \(thrown.map { "threw \(spelled($0))" } ?? "returned normally") for a plan with \
            \(example.shape.name); expected it to throw \(spelled(example.error)).
            A step that is missing or named twice cannot be wired by title: refuse the plan, \
            also when no step needs the title used twice.
            \(hint)
            """
        )
        #expect(
            thrown == nil || (enqueued.isEmpty && build.everyStep.allSatisfy { $0.dependencies.isEmpty }),
            "start() threw, but only after it had enqueued \(enqueued) or wired dependencies. Check the whole plan first. \(hint)"
        )
    }
}

/// An error as code, for messages: `BuildError.unknownStep("compile", neededBy: "link")`.
func spelled(_ error: BuildError) -> String {
    switch error {
    case .duplicateStep(let title): "BuildError.duplicateStep(\"\(title)\")"
    case .unknownStep(let title, let dependent):
        "BuildError.unknownStep(\"\(title)\", neededBy: \"\(dependent)\")"
    case .cycle(let titles): "BuildError.cycle(\(titles))"
    }
}
