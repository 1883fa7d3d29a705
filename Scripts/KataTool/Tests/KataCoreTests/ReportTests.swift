import Foundation
import Testing

@testable import KataCore

@Suite("Reading Swift Testing's reports")
struct ReportTests {
    private func fixture(_ name: String) throws -> Data {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../../fixtures")
            .standardized
        return try Data(contentsOf: folder.appending(path: name))
    }

    @Test("a starter's report (Swift 6.3): every spec fails, with its messages decoded")
    func starterReport() throws {
        let results = try #require(Report.results(in: try fixture("xunit-6.3-starter.xml")))
        #expect(results.count == 11)
        #expect(results.allSatisfy { $0.verdict == .fail && !$0.failures.isEmpty })
        let cancelled = try #require(results.first { $0.name == "cancelledWhileRunning()" })
        #expect(cancelled.suite == "Chapter2Tests.AskingTooEarlyOrTooLate")
        #expect(cancelled.failures.first?.contains("section “Results, cancellation and errors”.") == true)
    }

    @Test("a passing report (Swift 6.3): every spec passes, sorted by suite and name")
    func passingReport() throws {
        let results = try #require(Report.results(in: try fixture("xunit-6.3-passing.xml")))
        #expect(!results.isEmpty && results.allSatisfy { $0.verdict == .pass })
        #expect(results.map { "\($0.suite) \($0.name)" } == results.map { "\($0.suite) \($0.name)" }.sorted())
    }

    @Test("verdict lines match the shell scripts' format, and JSON round-trips")
    func linesAndJSON() throws {
        let results = [
            SpecResult(suite: "S", name: "a()", verdict: .fail, failures: ["no"]),
            SpecResult(suite: "S", name: "b()", verdict: .skip),
        ]
        #expect(Report.lines(results) == "fail\tS\ta()\nskip\tS\tb()\n")
        let decoded = try JSONDecoder().decode([SpecResult].self, from: try JSONEncoder().encode(results))
        #expect(decoded == results)
    }

    @Test("what is no report gives nil")
    func notAReport() {
        #expect(Report.results(in: Data("<html></html>".utf8)) == nil)
        #expect(Report.results(in: Data("cut off <testsuites><testcase".utf8)) == nil)
    }
}
