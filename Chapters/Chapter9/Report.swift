import Foundation

/// One section of a report, as the ledger returned it.
///
/// It is a class on purpose: a report's sections can be large, and whoever holds a section
/// keeps all of its rows in memory.
public final class Section: Sendable {
    /// The section's name, such as `sales`.
    public let name: String
    /// The report the section was loaded for.
    public let report: String
    /// The section's rows.
    public let rows: [String]

    /// Creates a section called `name` of report `report`.
    public init(name: String, report: String, rows: [String]) {
        self.name = name
        self.report = report
        self.rows = rows
    }
}

/// A finished report: a title and its sections, in the order they were asked for.
public struct Report: Sendable {
    /// The report's title, such as `March`.
    public let title: String
    /// The report's sections, in order.
    public let sections: [Section]

    /// Creates a report called `title` from `sections`.
    public init(title: String, sections: [Section]) {
        self.title = title
        self.sections = sections
    }
}

/// Where a report's sections come from: a ledger database, in the app.
public protocol SectionSource: Sendable {
    /// Loads section `name` of report `report`; it may block while it queries the ledger.
    func load(_ name: String, of report: String) -> Section
}
