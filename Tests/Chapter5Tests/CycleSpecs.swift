import Chapter5
import Foundation
import KataTestSupport
import Testing

/// A graph with a cycle in it, and the titles the cycle is made of.
struct CyclicShape: Sendable, CustomTestStringConvertible {
    let shape: Shape
    let cycle: Set<String>

    var testDescription: String { shape.name }

    static let all: [CyclicShape] = [
        CyclicShape(
            shape: Shape(
                name: "a step that needs itself",
                nodes: [
                    Node("configure"), Node("bootstrap", needs: ["configure", "bootstrap"], queue: 1),
                ]
            ),
            cycle: ["bootstrap"]
        ),
        CyclicShape(
            shape: Shape(
                name: "two steps that need each other",
                nodes: [
                    Node("codegen", needs: ["schema"]),
                    Node("schema", needs: ["codegen"], queue: 1),
                ]
            ),
            cycle: ["codegen", "schema"]
        ),
        CyclicShape(
            shape: Shape(
                name: "a loop of three after a sound first step",
                nodes: [
                    Node("fetch"), Node("compile", needs: ["fetch", "test"]),
                    Node("link", needs: ["compile"], queue: 1), Node("test", needs: ["link"]),
                ]
            ),
            cycle: ["compile", "link", "test"]
        ),
        CyclicShape(
            shape: Shape(
                name: "a loop of four across both queues, beside a sound branch",
                nodes: [
                    Node("docs"), Node("lint", needs: ["docs"], queue: 1),
                    Node("a", needs: ["d"]), Node("b", needs: ["a"], queue: 1),
                    Node("c", needs: ["b"]), Node("d", needs: ["c", "docs"], queue: 1),
                ]
            ),
            cycle: ["a", "b", "c", "d"]
        ),
        // A loop of seven: a search that stops after a few steps, or a report cut to a few
        // titles, misses it.
        CyclicShape(
            shape: Shape(
                name: "a loop of seven, each step on the other queue from the one it needs",
                nodes: [
                    Node("configure", needs: ["generate"]), Node("generate", needs: ["compile"], queue: 1),
                    Node("compile", needs: ["link"]), Node("link", needs: ["sign"], queue: 1),
                    Node("sign", needs: ["package"]), Node("package", needs: ["verify"], queue: 1),
                    Node("verify", needs: ["configure"]),
                ]
            ),
            cycle: ["configure", "generate", "compile", "link", "sign", "package", "verify"]
        ),
        // A loop far longer than any real build's: a search or a report capped at any count
        // below 128 (8, 10, 16, 100…) misses it or cuts it, where the loop of seven passes.
        CyclicShape(
            shape: Shape(
                name: "a loop of 128 steps, entered from a step outside it",
                nodes: [Node("prepare")]
                    + (0..<128).map { Node("stage \($0)", needs: ["stage \(($0 + 1) % 128)"], queue: $0 % 2) }
                    + [Node("release", needs: ["prepare", "stage 0"], queue: 1)]
            ),
            cycle: Set((0..<128).map { "stage \($0)" })
        ),
        // Listed dependents first, the search meets “package” and “compile” on its way into the
        // loop: they lead to it but are not part of it.
        CyclicShape(
            shape: Shape(
                name: "a loop of two reached through steps outside it",
                nodes: [
                    Node("schema", needs: ["codegen"]), Node("codegen", needs: ["schema"], queue: 1),
                    Node("compile", needs: ["codegen"]), Node("package", needs: ["compile"], queue: 1),
                ]
            ),
            cycle: ["codegen", "schema"]
        ),
        // The plan lists “docs” first (it lists dependents first, and nothing needs “docs”),
        // and “docs” leads nowhere near the loop: a search from that one step never sees it.
        CyclicShape(
            shape: Shape(
                name: "a loop of three that the first step listed does not lead to",
                nodes: [
                    Node("compile", needs: ["test"]), Node("link", needs: ["compile"], queue: 1),
                    Node("test", needs: ["link"]), Node("fetch"), Node("docs", needs: ["fetch"], queue: 1),
                ]
            ),
            cycle: ["compile", "link", "test"]
        ),
    ]
}

@Suite("A plan with a cycle is refused before anything is enqueued", .watched)
struct CycleSpecs {
    // BuildPlan.start(): what does it check before its first addDependency or addOperation?
    // A step may need itself. See "Refuse cycles before you enqueue".
    // Covers: C38
    // Paths: values
    @Test(
        "start() throws an error naming the steps of the cycle and enqueues nothing",
        .preflightCycles, arguments: CyclicShape.all)
    func cycleIsRefused(example: CyclicShape) async throws {
        let recorder = Recorder<Event>()
        let build = Build(example.shape, recorder: recorder)
        let hint = lesson.see("Refuse cycles before you enqueue")

        // A step wired to itself deadlocks inside addDependency: then stop, touching nothing.
        guard let outcome = await attempt(build.plan) else { return }
        let enqueued = build.queues.flatMap(\.handoffs).map(\.title)

        guard case .failure(.cycle(let titles)) = outcome else {
            let what =
                switch outcome {
                case .success: "returned normally"
                case .failure(let error): "threw “\(error)”"
                }
            Issue.record(
                """
                start() \(what) for a plan with a cycle through \(describe(example.cycle)); \
                expected BuildError.cycle naming those steps.
                It handed \(enqueued.count) steps to the queues; steps in a cycle never run, they wait for each other forever.
                \(hint)
                """
            )
            return
        }
        let outside = titles.filter { !example.cycle.contains($0) }
        #expect(
            Set(titles) == example.cycle && titles.count == example.cycle.count,
            """
            BuildError.cycle named \(titles.map { "“\($0)”" }); expected exactly the steps of the loop, \
            \(describe(example.cycle)), each once.\
            \(outside.isEmpty ? "" : " \(outside.map { "“\($0)”" }.joined(separator: " and ")) only lead into the loop and are not part of it: report just the steps that come back round to the first.")
            \(hint)
            """
        )
        let needs = Dictionary(
            example.shape.nodes.map { ($0.title, Set($0.needs)) }, uniquingKeysWith: { $0.union($1) })
        func follows(_ order: [String]) -> Bool {
            order.indices.allSatisfy { index in
                needs[order[index]]?.contains(order[(index + 1) % order.count]) ?? false
            }
        }
        #expect(
            follows(titles),
            """
            BuildError.cycle named \(titles.map { "“\($0)”" }): \
            \(follows(titles.reversed()) ? "that is the loop backwards. " : "")List the steps so that each \
            needs the next and the last needs the first; any of them may come first.
            \(hint)
            """
        )
        #expect(
            enqueued.isEmpty && build.everyStep.allSatisfy { $0.dependencies.isEmpty },
            "start() threw, but only after it had enqueued \(enqueued) or wired dependencies. Check the whole graph first. \(hint)"
        )
    }
}
