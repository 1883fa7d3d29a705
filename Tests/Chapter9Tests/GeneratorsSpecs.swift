import Chapter9
import Foundation
import KataTestSupport
import Testing

@Suite("Each generator chains only its own reports", .watched)
struct GeneratorsSpecs {
    // Two generators, two ledgers. Look at where ReportGenerator keeps the newest job, the one
    // it chains the next report to: in the generator, or somewhere every generator shares (a
    // static)? See "What dependencies keep alive".
    // Covers: C100
    // Paths: interference
    @Test("a report held on one generator's ledger holds back no report of another generator")
    func generatorsChainOnlyTheirOwnReports() async {
        // In a process of its own: a newest job that every generator shares would otherwise be
        // replaced by the specs running beside it, and decide this verdict.
        LastWords.forget("twoGenerators")
        let outcome = await #expect(
            processExitsWith: .success,
            """
            One generator's report January was held on its ledger, and another generator was asked \
            for Q1: expected Q1 to be delivered meanwhile, and January once its ledger let go.
            \(lesson.see("What dependencies keep alive"))
            """
        ) {
            await GeneratorsSpecs.twoGenerators()
        }
        LastWords.explain("twoGenerators", outcome)
    }

    // Several threads ask one generator for reports at the same moment. Look at how generate()
    // finds the newest job and records its own: can another call come in between? See "What
    // dependencies keep alive".
    // Covers: C100
    // Paths: interference
    @Test(
        "reports asked for from several threads at once still form one chain: no two of them wait for the same report"
    )
    func reportsFromSeveralThreadsFormOneChain() async {
        let threads = 8
        let steps = 200
        let rounds = 16
        var forked: [String] = []  // per round that forked: how many jobs were followed by two
        // The previous round's jobs stay alive through the next round, so that a newest job
        // every generator shares is still there when the next round's generator begins.
        var lastRound: [ReportJob] = []
        for round in 1...rounds {
            let generator = ReportGenerator(source: Ledger())
            // Suspended, so that the calls meet one another and none of them meets the work.
            generator.queue.isSuspended = true
            // Every thread makes its first call once every thread is ready.
            let together = Rendezvous(parties: threads)
            let jobs = Protected<[ReportJob]>([])
            let ended = Protected(0)
            for thread in 0..<threads {
                Thread {
                    var mine: [ReportJob] = []
                    if together.arrive() {
                        for step in 0..<steps {
                            mine.append(generator.generate("T\(thread)-\(step)", sections: ["sales"]) { _ in })
                        }
                    }
                    jobs.withValue { $0 += mine }
                    ended.withValue { $0 += 1 }
                }.start()
            }
            let asked = await waitUntil(
                "\(threads) threads to return from \(steps) calls of generate() each",
                hint: lesson.see("What dependencies keep alive")
            ) { ended.value == threads }
            let all = jobs.value
            var followers: [ObjectIdentifier: Int] = [:]
            for job in all {
                for dependency in job.dependencies { followers[ObjectIdentifier(dependency), default: 0] += 1 }
            }
            let forks = followers.values.filter { $0 > 1 }.count
            let unchained = all.filter(\.dependencies.isEmpty).count
            generator.queue.cancelAllOperations()
            generator.queue.isSuspended = false
            await waitUntil("the cancelled jobs to leave the queue") { generator.queue.operationCount == 0 }
            guard asked, all.count == threads * steps else { return }
            if forks > 0 || unchained != 1 {
                forked.append(
                    "round \(round): \(forks) jobs followed by two or more, \(unchained) waiting for none"
                )
            }
            lastRound = all
        }
        withExtendedLifetime(lastRound) {}
        #expect(
            forked.isEmpty,
            """
            In each of \(rounds) rounds, \(threads) threads asked one generator for \(steps) reports \
            each, all starting at the same moment; expected one chain each time: every job \
            followed by at most one job, and only the first waiting for none. Instead: \
            \(forked.joined(separator: "; ")). A job followed by two: two calls both chained to \
            the same newest job, and neither to the other, because generate() read the newest job \
            and recorded its own in two steps and another call came in between; read and replace \
            it in one critical section. No job waiting for none: even the first job of a new \
            generator waited for a job of another one, a newest job kept where every generator \
            shares it. \(lesson.see("What dependencies keep alive"))
            """)
    }

    /// Holds January's load on one generator's ledger, asks another generator for Q1, and looks
    /// at what was delivered. Runs in an exit test, beside no other spec.
    static func twoGenerators() async {
        let busyLedger = Ledger(holding: ["January"])
        defer { busyLedger.release("January") }
        let busy = ReportGenerator(source: busyLedger)
        let other = ReportGenerator(source: Ledger())
        let delivered = Recorder<String>()
        busy.generate("January", sections: ["sales"]) { delivered.record($0.title) }
        guard
            await waitUntil(
                "January's sections to start loading on the first generator's ledger",
                hint: "The ledger saw \(busyLedger.loads.timeline). \(lesson.see("Waiting inside a queue"))",
                { busyLedger.loadCount(of: "January") > 0 })
        else { return }
        other.generate("Q1", sections: ["sales"]) { delivered.record($0.title) }
        let arrived = await comesTrue(within: patience) { delivered.all.contains("Q1") }
        #expect(
            arrived && !delivered.all.contains("January"),
            """
            While January's report was held on one generator's ledger, another generator was \
            asked for Q1; \(arrived ? "Q1 arrived only after January" : "Q1 never arrived in \(patience.seconds) s"). \
            The other generator's report waited for January: the newest job it chained Q1 to was \
            the first generator's. Each generator chains a report only to its own earlier reports: \
            keep the newest job in the generator, never in a static every generator shares, since \
            a dependency holds across queues.
            \(lesson.see("What dependencies keep alive"))
            """)
        busyLedger.release("January")
        await waitUntil(
            "January to be delivered once its ledger let go",
            hint: "Delivered: \(delivered.timeline). \(lesson.see("What dependencies keep alive"))",
            { delivered.all.contains("January") })
    }
}

/// A meeting point for a fixed number of threads, used again and again: each call returns once
/// every party has called it for the same turn.
final class Rendezvous: @unchecked Sendable {  // its state is only touched under `condition`
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var turn = 0

    init(parties: Int) {
        self.parties = parties
    }

    /// Waits for the other parties of this turn; false if they did not all come within the bound.
    func arrive() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let mine = turn
        arrived += 1
        if arrived == parties {
            arrived = 0
            turn += 1
            condition.broadcast()
            return true
        }
        let deadline = Date(timeIntervalSinceNow: Bound.standard.timeInterval)
        while turn == mine {
            if !condition.wait(until: deadline) { return turn != mine }
        }
        return true
    }
}
