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
    /// The path classes its `// Paths:` line names (`memory`, `reuse`, …), as written.
    public var paths: [String]

    public init(name: String, title: String, claims: [String], file: String, paths: [String] = []) {
        self.name = name
        self.title = title
        self.claims = claims
        self.file = file
        self.paths = paths
    }
}

/// The classes of paths a careless design gets wrong, which the specs of every claim walk
/// (`Tests/README.md`, "Path classes"). A spec names those it walks on a `// Paths:` line.
public enum PathClass: String, CaseIterable, Sendable {
    /// What stays in memory after every exit: success, error, cancel, cancel-all, owner gone.
    case memory
    /// A second call after a cancel, a cancel-all or a failure.
    case reuse
    /// Each numeric parameter or priority at two or more values, the extremes among them.
    case values
    /// Two instances, operations or callers at once, each left alone by the other.
    case interference
    /// Every collaborator a learner might hold: completion blocks, timers, registries, keys.
    case collaborators
}

/// Reads the specs declared in a Swift source file.
public enum SpecFile {
    /// The specs declared in `source`, in order.
    ///
    /// A spec's claims come from a `// Covers:` line in the comment block right above its
    /// `@Test`, and its path classes from a `// Paths:` line there; a comment anywhere else
    /// covers nothing. Its title is the first string literal
    /// after `@Test`, and its name is the function that follows.
    public static func specs(in source: String, file: String) -> [Spec] {
        var specs: [Spec] = []
        var covers: [String]?  // from the comment block right above the current line
        var paths: [String]?  // likewise
        var pending: (claims: [String]?, paths: [String]?, title: String?)?  // between `@Test` and its `func`
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if pending == nil, trimmed.hasPrefix("//") {
                if let range = trimmed.range(of: "Covers:") {
                    covers = ClaimIDs.all(in: trimmed[range.upperBound...])
                }
                if let range = trimmed.range(of: "Paths:") {
                    paths = trimmed[range.upperBound...].split { $0 == "," || $0 == " " }.map(String.init)
                }
                continue
            }
            if pending == nil, trimmed.hasPrefix("@Test") {
                pending = (covers, paths, nil)
                covers = nil
                paths = nil
            }
            guard var found = pending else {
                covers = nil
                paths = nil
                continue
            }
            if found.title == nil { found.title = firstStringLiteral(in: trimmed) }
            if let name = functionName(in: trimmed) {
                specs.append(
                    Spec(
                        name: name, title: found.title ?? "", claims: found.claims ?? [], file: file,
                        paths: found.paths ?? []))
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
