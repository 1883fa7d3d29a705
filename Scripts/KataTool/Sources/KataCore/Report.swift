import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// What a spec's run came to.
public enum Verdict: String, Codable, Sendable {
    case pass, fail, skip
}

/// One spec's outcome in a Swift Testing report.
public struct SpecResult: Codable, Equatable, Sendable {
    /// The spec's suite, as the report names it: `Chapter2Tests.AskingTooEarlyOrTooLate`.
    public var suite: String
    /// The spec's name with its parameters: `cancelledWhileRunning()`.
    public var name: String
    public var verdict: Verdict
    /// The failure messages, in order; empty unless it failed.
    public var failures: [String]

    public init(suite: String, name: String, verdict: Verdict, failures: [String] = []) {
        self.suite = suite
        self.name = name
        self.verdict = verdict
        self.failures = failures
    }
}

/// Reads the JUnit-style XML that `swift test --xunit-output` writes for Swift Testing.
public enum Report {
    /// The outcome of every spec in `data`, sorted by suite and name; nil when it is no report.
    public static func results(in data: Data) -> [SpecResult]? {
        let reader = Reader()
        let parser = XMLParser(data: data)
        parser.delegate = reader
        guard parser.parse(), reader.sawSuites else { return nil }
        return reader.results.sorted { ($0.suite, $0.name) < ($1.suite, $1.name) }
    }

    /// The lines `Scripts/lib.sh`'s `kata_verdicts` prints for the same report: `verdict<TAB>suite<TAB>name`.
    public static func lines(_ results: [SpecResult]) -> String {
        results.map { "\($0.verdict.rawValue)\t\($0.suite)\t\($0.name)\n" }.joined()
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var results: [SpecResult] = []
        var sawSuites = false
        private var current: SpecResult?

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch element {
            case "testsuites": sawSuites = true
            case "testcase":
                current = SpecResult(
                    suite: attributes["classname"] ?? "", name: attributes["name"] ?? "", verdict: .pass)
            case "failure":
                current?.verdict = .fail
                current?.failures.append(attributes["message"] ?? "")
            case "skipped":
                if current?.verdict == .pass { current?.verdict = .skip }
            default: break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            if element == "testcase", let done = current {
                results.append(done)
                current = nil
            }
        }
    }
}
