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
