/// A spec (a `@Test` function) as its source declares it.
public struct Spec: Equatable, Sendable {
    /// The function's name, which names its hints: `totalIsShown`.
    public var name: String
    /// The title given to `@Test`, which names the path it walks.
    public var title: String
    /// The claims its `// Covers:` line names, in the order written; empty when it has none.
    public var claims: [String]
    /// The file it is declared in, without folder or extension: `CopySpecs`.
    public var file: String

    public init(name: String, title: String, claims: [String], file: String) {
        self.name = name
        self.title = title
        self.claims = claims
        self.file = file
    }
}

/// Reads the specs declared in a Swift source file.
public enum SpecFile {
    /// The specs declared in `source`, in order.
    ///
    /// A spec's claims come from a `// Covers:` line in the comment block right above its
    /// `@Test`; a comment anywhere else covers nothing. Its title is the first string literal
    /// after `@Test`, and its name is the function that follows.
    public static func specs(in source: String, file: String) -> [Spec] {
        var specs: [Spec] = []
        var covers: [String]?  // from the comment block right above the current line
        var pending: (claims: [String]?, title: String?)?  // between `@Test` and its `func`
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if pending == nil, trimmed.hasPrefix("//") {
                if let range = trimmed.range(of: "Covers:") {
                    covers = ClaimIDs.all(in: trimmed[range.upperBound...])
                }
                continue
            }
            if pending == nil, trimmed.hasPrefix("@Test") {
                pending = (covers, nil)
                covers = nil
            }
            guard var found = pending else {
                covers = nil
                continue
            }
            if found.title == nil { found.title = firstStringLiteral(in: trimmed) }
            if let name = functionName(in: trimmed) {
                specs.append(Spec(name: name, title: found.title ?? "", claims: found.claims ?? [], file: file))
                pending = nil
            } else {
                pending = found
            }
        }
        return specs
    }

    /// The text of the first `"…"` literal in `line`, if any.
    static func firstStringLiteral(in line: Substring) -> String? {
        guard let open = line.firstIndex(of: "\"") else { return nil }
        let rest = line[line.index(after: open)...]
        guard let close = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<close])
    }

    /// The name in `func name(` on `line`, if the line declares a function.
    static func functionName(in line: Substring) -> String? {
        guard let range = line.range(of: "func ") else { return nil }
        let name = line[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.isEmpty ? nil : String(name)
    }
}
