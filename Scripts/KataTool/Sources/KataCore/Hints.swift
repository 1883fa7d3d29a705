/// A chapter's stepped hints, `Tests/Hints/ChapterN.md`: hint 1 is the comment above each spec,
/// and this file holds hints 2 and 3 under a `## specName` heading per spec.
public struct Hints: Equatable, Sendable {
    /// The spec names that have a section, in order.
    public var specs: [String]
    /// The text of each spec's numbered hints: `levels["totalIsShown"]?[2]`.
    public var levels: [String: [Int: String]]

    /// Reads the hints in `text`.
    public init(_ text: String) {
        var specs: [String] = []
        var levels: [String: [Int: String]] = [:]
        var spec: String?
        var level: Int?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                spec = String(line.dropFirst(3))
                specs.append(spec!)
                level = nil
                continue
            }
            guard let current = spec else { continue }
            let digits = line.prefix { $0.isASCII && $0.isNumber }
            if !digits.isEmpty, line.dropFirst(digits.count).hasPrefix(". "), let number = Int(digits) {
                level = number
                levels[current, default: [:]][number] = String(line.dropFirst(digits.count + 2))
            } else if let number = level, !line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                levels[current, default: [:]][number, default: ""] += " " + line.trimmingLeadingSpaces()
            }
        }
        self.specs = specs
        self.levels = levels
    }
}
