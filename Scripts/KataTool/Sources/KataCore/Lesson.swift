/// A chapter's lesson, `Chapters/ChapterN/README.md`, as far as the checks read it.
public struct Lesson: Equatable, Sendable {
    /// The `## ` headings, in order, without the `## `.
    public var sections: [String]
    /// Every claim id the `## Claims` section mentions, defined there or rested on.
    public var claimIDs: Set<String>
    /// Each claim the `## Claims` section defines (`- C85: …`), without its sources.
    public var claims: [String: String]

    /// Reads the lesson in `text`.
    public init(_ text: String) {
        var sections: [String] = []
        var ids: Set<String> = []
        var claims: [String: String] = [:]
        var current: (id: String, text: String)?
        var inClaims = false
        func close() {
            if let open = current { claims[open.id] = Self.withoutSources(open.text) }
            current = nil
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                close()
                let title = String(line.dropFirst(3))
                sections.append(title)
                inClaims = title == "Claims"
                continue
            }
            guard inClaims else { continue }
            ids.formUnion(ClaimIDs.all(in: line))
            if line.hasPrefix("- "), let colon = line.firstIndex(of: ":"),
                let id = ClaimIDs.all(in: line[..<colon]).first,
                line[line.index(line.startIndex, offsetBy: 2)..<colon] == id
            {
                close()
                current = (id, line[line.index(after: colon)...].trimmingLeadingSpaces())
            } else if line.hasPrefix("  "), var open = current {
                open.text += " " + line.trimmingLeadingSpaces()
                current = open
            } else {
                close()
            }
        }
        close()
        self.sections = sections
        self.claimIDs = ids
        self.claims = claims
    }

    /// `text` without the parenthesised sources that end it: "Runs once. (000, "A (b)")" → "Runs once.".
    static func withoutSources(_ text: String) -> String {
        var characters = Array(text)
        while characters.last == " " { characters.removeLast() }
        var end = characters.count
        if end > 0, characters[end - 1] == "." { end -= 1 }
        guard end > 0, characters[end - 1] == ")" else { return String(characters) }
        var depth = 0
        var index = end - 1
        while index >= 0 {
            if characters[index] == ")" { depth += 1 }
            if characters[index] == "(" {
                depth -= 1
                if depth == 0 { break }
            }
            index -= 1
        }
        guard index >= 0 else { return String(characters) }
        var start = index
        while start > 0, characters[start - 1] == " " { start -= 1 }
        return String(characters[..<start])
    }
}

extension Substring {
    func trimmingLeadingSpaces() -> String {
        String(drop { $0 == " " })
    }
}
