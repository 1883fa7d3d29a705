import Foundation

/// Why a build plan refused to start.
public enum BuildError: Error, Equatable, CustomStringConvertible {
    /// Two steps share a title.
    case duplicateStep(String)
    /// A step needs a step that is not in the plan.
    case unknownStep(String, neededBy: String)
    /// The steps named, in order, each need the next, and the last needs the first.
    case cycle([String])

    /// The error in words.
    public var description: String {
        switch self {
        case .duplicateStep(let title):
            "two steps are called “\(title)”"
        case .unknownStep(let title, let dependent):
            "“\(dependent)” needs “\(title)”, which is not in the plan"
        case .cycle(let titles):
            "cycle: " + titles.joined(separator: " → ")
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
    public mutating func add(_ step: BuildStep, needs: [String] = [], on queue: OperationQueue) {
        entries.append(Entry(step: step, needs: needs, queue: queue))
    }

    /// Starts the build.
    public func start() throws(BuildError) {
        var steps: [String: BuildStep] = [:]
        for entry in entries {
            steps[entry.step.title] = entry.step
        }
        // Get every step onto its queue first, so that no queue sits idle...
        for entry in entries {
            entry.queue.addOperation(entry.step)
        }
        // ...then tell each step what it waits for.
        // TODO: a plan with a loop in it should be refused somewhere.
        for entry in entries {
            for title in entry.needs {
                guard let dependency = steps[title] else {
                    throw .unknownStep(title, neededBy: entry.step.title)
                }
                entry.step.addDependency(dependency)
            }
        }
    }
}
