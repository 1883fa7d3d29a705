import Chapter5
import Foundation
import KataTestSupport
import Testing

@Suite("A step starts only after every step it needs has finished", .watched)
struct OrderSpecs {
    // BuildPlan.start(): when is each step handed to its queue, and are its edges there yet?
    // See "Wire the graph, then enqueue it".
    // Covers: C35, C36, C37
    @Test(
        "every edge holds: a dependency finishes before its dependent starts, on either queue",
        arguments: Shape.all
    )
    func everyEdgeHolds(shape: Shape) async throws {
        let recorder = Recorder<Event>()
        let build = Build(shape, recorder: recorder)

        try await launch(build.plan)
        await waitUntil(
            "every step of the \(shape.name) to finish",
            hint: "Timeline: \(recorder.timeline)\n" + lesson.see("Wire the graph, then enqueue it")
        ) { build.isFinished }

        let events = recorder.all
        let broken = shape.edges.filter { edge in
            guard let started = events.firstIndex(of: .start(edge.dependent)) else { return false }
            return events.firstIndex(of: .finish(edge.dependency)).map { $0 > started } ?? true
        }
        #expect(
            broken.isEmpty,
            """
            \(broken.map { "“\($0.dependent)” started before “\($0.dependency)”, which it needs, had finished." }
                .joined(separator: "\n"))
            Expected every dependency to finish first, whatever queue each step is on.
            Timeline: \(recorder.timeline)
            \(lesson.see("Wire the graph, then enqueue it"))
            """
        )
    }

    // BuildPlan.start(): which queue gets each step, and what it depends on at that moment.
    // See "Wire the graph, then enqueue it".
    // Covers: C35, C36
    @Test(
        "each step reaches the queue it was planned for with every dependency already attached",
        arguments: Shape.all
    )
    func wiredBeforeEnqueued(shape: Shape) async throws {
        let recorder = Recorder<Event>()
        let build = Build(shape, recorder: recorder)

        try await launch(build.plan)
        await waitUntil(
            "every step of the \(shape.name) to finish",
            hint: "Timeline: \(recorder.timeline)\n" + lesson.see("Wire the graph, then enqueue it")
        ) { build.isFinished }

        let handoffs = build.queues.flatMap(\.handoffs)
        var problems: [String] = []
        for node in shape.nodes {
            let arrivals = handoffs.filter { $0.title == node.title }
            let planned = build.queues[node.queue].label
            guard let handoff = arrivals.first, arrivals.count == 1 else {
                problems.append(
                    "“\(node.title)” was handed to a queue \(arrivals.count) times; expected once, to \(planned)."
                )
                continue
            }
            if handoff.queue != planned {
                problems.append(
                    "“\(node.title)” went to \(handoff.queue); the plan put it on \(planned).")
            }
            if handoff.needs != Set(node.needs) {
                problems.append(
                    "When “\(node.title)” reached \(handoff.queue) it depended on \(describe(handoff.needs)); it needs \(describe(Set(node.needs)))."
                )
            }
        }
        #expect(
            problems.isEmpty,
            """
            \(problems.joined(separator: "\n"))
            A dependency added after addOperation may come too late: the step can already be running.
            \(lesson.see("Wire the graph, then enqueue it"))
            """
        )
    }
}

/// Inputs in a stable order, for messages: `[“a”: “x”, “b”: “y”]`, or a note if there were none.
func describe(_ inputs: [String: String]?) -> String {
    guard let inputs else { return "nothing (its work never ran)" }
    return "[" + inputs.sorted(by: <).map { "“\($0.key)”: “\($0.value)”" }.joined(separator: ", ")
        + "]"
}

/// Titles in a stable order, for messages: `[]` or `[“a”, “b”]`.
func describe(_ titles: Set<String>) -> String {
    "[" + titles.sorted().map { "“\($0)”" }.joined(separator: ", ") + "]"
}
