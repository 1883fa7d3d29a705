import Chapter5
import Foundation
import KataTestSupport
import Testing

@Suite("Results travel from a finished step to its dependents through the step objects", .watched)
struct ResultSpecs {
    // BuildStep.main() and `output`: where are the inputs read from, and where is the output
    // kept? See "Pass results through the operations".
    // Covers: C40, C37
    // Paths: values
    @Test("a step that needs several steps receives exactly their outputs, under their titles")
    func fanInReceivesEveryOutput() async throws {
        let recorder = Recorder<Event>()
        let received = Protected<[String: String]?>(nil)
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]
        // More inputs than any spec's other fan-in: reading only the first few dependencies
        // (8, 16, 32…) leaves the rest out.
        let shards = ["north", "south", "east", "west"] + (1...44).map { "region \($0)" }

        // The plan lists "map" first: the order of add(_:needs:on:) must not matter.
        var plan = BuildPlan()
        let map = BuildStep("map") { inputs in
            recorder.record(.start("map"))
            received.withValue { $0 = inputs }
            return "a map of \(inputs.count) regions"
        }
        plan.add(map, needs: shards, on: queues[1])
        plan.add(
            BuildStep("unrelated", work: Build.work("unrelated", recorder: recorder)), on: queues[0]
        )
        for (index, shard) in shards.enumerated() {
            let step = BuildStep(shard) { _ in
                recorder.record(.start(shard))
                recorder.record(.finish(shard))
                return "tiles of \(shard)"
            }
            plan.add(step, on: queues[index % 2])
        }

        try await launch(plan)
        await waitUntil(
            "“map” to finish",
            hint: "Timeline: \(recorder.timeline)\n"
                + lesson.see("Pass results through the operations")
        ) { map.isFinished }

        let expected = Dictionary(uniqueKeysWithValues: shards.map { ($0, "tiles of \($0)") })
        let inputs = received.value
        let missing = shards.filter { inputs?[$0] != "tiles of \($0)" }
        #expect(
            inputs == expected,
            """
            “map” needs \(shards.count) shards and should have received each one's output under its title.
            It received \(describe(inputs))\(missing.isEmpty ? "" : "; missing: \(missing.map { "“\($0)”" }.joined(separator: ", "))").
            Read each input from the step's own dependencies after they finished.
            Timeline: \(recorder.timeline)
            \(lesson.see("Pass results through the operations"))
            """
        )
        #expect(
            map.output == "a map of \(shards.count) regions",
            "“map”.output is \(map.output.map { "“\($0)”" } ?? "nil"); expected “a map of \(shards.count) regions”. \(lesson.see("Pass results through the operations"))"
        )
    }

    // BuildStep.output: where does a step keep its output, and does it outlive the step? A new
    // step is often made at the address of one that has just been freed. See "Pass results
    // through the operations".
    // Covers: C40
    // Paths: memory
    @Test("a new step reports no output until it has run, though steps before it have run and gone")
    func newStepHasNoOutputYet() {
        // Everything happens on this one thread, with no allocation between freeing one step and
        // making the next: the allocator then usually hands the new step the old one's memory
        // (Linux's glibc: 11 of 12 rounds, every run measured; not measured on macOS, so the
        // mutant this catches is tagged linux-only).
        let rounds = 12
        let made = (1...rounds).map { "objects \($0)" }
        var before = [String?](repeating: nil, count: rounds)
        var after = [String?](repeating: nil, count: rounds)
        for round in 0..<rounds {
            let value = made[round]
            let compile = BuildStep("compile") { _ in value }
            before[round] = compile.output
            compile.start()  // ready, in no queue: runs on this thread, then is released
            after[round] = compile.output
        }

        let hint = lesson.see("Pass results through the operations")
        let early = (0..<rounds).filter { before[$0] != nil }
        let earlyList = early.prefix(3).map { "round \($0 + 1): “\(before[$0] ?? "")”" }
        #expect(
            early.isEmpty,
            """
            A new “compile” step reported an output before it had run, in \(early.count) of \(rounds) \
            rounds (\(earlyList.joined(separator: ", "))); expected nil until start().
            Each round made one step, ran it and let it go, so that output belongs to a step already \
            gone. Storage outside the step outlives it, and a new step may reuse a freed step's \
            title or its memory: keep the output on the step itself.
            \(hint)
            """
        )
        let wrong = (0..<rounds).filter { after[$0] != made[$0] }
        let wrongList = wrong.prefix(3).map { round in
            "round \(round + 1): \(after[round].map { "“\($0)”" } ?? "nil"), expected “\(made[round])”"
        }
        #expect(
            wrong.isEmpty,
            """
            After start(), \(wrong.count) of \(rounds) “compile” steps reported another output than \
            their own work returned (\(wrongList.joined(separator: "; "))).
            \(hint)
            """
        )
    }

    // BuildStep.output and main(): is anything shared between two plans that use the same
    // titles? See "Pass results through the operations".
    // Covers: C40
    // Paths: interference
    @Test("two builds with the same step titles each see their own outputs")
    func twoBuildsKeepTheirOwnOutputs() async throws {
        let recorder = Recorder<Event>()
        let review = heldQueue("the review queue (suspended)", recorder: recorder)
        defer { review.isSuspended = false }
        let received = Protected<[String: [String: String]]>([:])
        let queues = [
            EagerQueue("queue A", recorder: recorder), EagerQueue("queue B", recorder: recorder),
        ]

        func build(_ flavour: String, reviewedOn reviewQueue: OperationQueue?) -> (
            plan: BuildPlan, compile: BuildStep, link: BuildStep
        ) {
            var plan = BuildPlan()
            let compile = BuildStep("compile") { _ in
                recorder.record(.start("compile \(flavour)"))
                return "\(flavour) objects"
            }
            let link = BuildStep("link") { inputs in
                recorder.record(.start("link \(flavour)"))
                received.withValue { $0[flavour] = inputs }
                return "\(flavour) binary"
            }
            plan.add(compile, on: queues[0])
            if let reviewQueue {
                plan.add(
                    BuildStep("review", work: Build.work("review", recorder: recorder)),
                    on: reviewQueue)
                plan.add(link, needs: ["compile", "review"], on: queues[1])
            } else {
                plan.add(link, needs: ["compile"], on: queues[1])
            }
            return (plan, compile, link)
        }

        let debug = build("debug", reviewedOn: review)
        let release = build("release", reviewedOn: nil)
        let hint = lesson.see("Pass results through the operations")

        try await launch(debug.plan)
        guard
            await waitUntil(
                "the debug build's “compile” to finish", hint: hint, { debug.compile.isFinished })
        else { return }
        try await launch(release.plan)
        guard
            await waitUntil(
                "the release build's “link” to finish", hint: hint, { release.link.isFinished })
        else { return }
        recorder.record(.note("release build done"))
        review.isSuspended = false
        await waitUntil("the debug build's “link” to finish", hint: hint) { debug.link.isFinished }

        let seen = received.value
        for flavour in ["debug", "release"] {
            #expect(
                seen[flavour]?["compile"] == "\(flavour) objects",
                """
                The \(flavour) build's “link” received \(describe(seen[flavour])) \
                as its inputs; its “compile” produced “\(flavour) objects”.
                An output must travel on the step object, not through storage shared by title.
                Timeline: \(recorder.timeline)
                \(hint)
                """
            )
        }
    }
}
