import Foundation

/// Why a build plan refused to start.
public enum BuildError: Error, Equatable, CustomStringConvertible {
    /// Two steps share a title.
    case duplicateStep(String)
    /// A step needs a step that is not in the plan.
    case unknownStep(String, neededBy: String)
    /// The steps named, in order, each need the next, and the last needs the first.
    case cycle([String])

    /// The error in words, such as `cycle: compile → link → compile`.
    public var description: String {
        switch self {
        case .duplicateStep(let title):
            "two steps are called “\(title)”"
        case .unknownStep(let title, let dependent):
            "“\(dependent)” needs “\(title)”, which is not in the plan"
        case .cycle(let titles):
            "cycle: " + (titles + titles.prefix(1)).joined(separator: " → ")
        }
    }
}

/// A build as a graph of steps, each on the queue of your choice, started all at once.
public struct BuildPlan {
    private struct Entry {
        let step: BuildStep
        let needs: [String]
        let queue: OperationQueue
    }

    private var entries: [Entry] = []

    /// Creates an empty plan.
    public init() {}

    /// Adds `step`, which needs the steps titled `needs`, to run on `queue`.
    ///
    /// Nothing is wired or enqueued yet; `start()` does both, in that order.
    public mutating func add(_ step: BuildStep, needs: [String] = [], on queue: OperationQueue) {
        entries.append(Entry(step: step, needs: needs, queue: queue))
    }

    /// Checks the graph, wires every dependency, then hands each step to its queue.
    ///
    /// - Throws: `BuildError` before anything is wired or enqueued if the graph is unsound.
    public func start() throws(BuildError) {
        var steps: [String: BuildStep] = [:]
        for entry in entries {
            guard steps.updateValue(entry.step, forKey: entry.step.title) == nil else {
                throw .duplicateStep(entry.step.title)
            }
        }
        var edges: [(dependent: BuildStep, dependency: BuildStep)] = []
        for entry in entries {
            for title in entry.needs {
                guard let dependency = steps[title] else {
                    throw .unknownStep(title, neededBy: entry.step.title)
                }
                edges.append((entry.step, dependency))
            }
        }
        if let cycle = firstCycle() { throw .cycle(cycle) }

        // Configure first: once a step is in a queue it may start at any moment.
        for edge in edges { edge.dependent.addDependency(edge.dependency) }
        for entry in entries { entry.queue.addOperation(entry.step) }
    }

    /// Finds a cycle by depth-first search and returns its titles in order, or nil if none.
    private func firstCycle() -> [String]? {
        let needs = Dictionary(
            entries.map { ($0.step.title, $0.needs) }, uniquingKeysWith: { first, _ in first })
        var finished: Set<String> = []
        var path: [String] = []  // the titles on the current search path, each needing the next

        func visit(_ title: String) -> [String]? {
            if let start = path.firstIndex(of: title) { return Array(path[start...]) }
            guard !finished.contains(title) else { return nil }
            path.append(title)
            for next in needs[title] ?? [] {
                if let cycle = visit(next) { return cycle }
            }
            path.removeLast()
            finished.insert(title)
            return nil
        }

        for entry in entries {
            if let cycle = visit(entry.step.title) { return cycle }
        }
        return nil
    }
}
