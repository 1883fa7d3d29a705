import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("Quality of service belongs to the job and covers its own work", .watched)
struct QualitySpecs {
    // Look at Urgency.qualityOfService and at where PrintShop.submit puts the printing: the
    // job's quality of service covers only the work the job itself runs, not a completion block.
    // Covers: C49, C48
    // Paths: values
    @Test(
        "each job prints as its own work, at the quality of service its urgency gives",
        arguments: Urgency.allCases
    )
    func workRunsAtTheJobsQuality(_ urgency: Urgency) async {
        let shop = PrintShop()
        let seen = Protected<(onThePress: Bool, threadClass: UInt32?)?>(nil)
        let job = shop.submit("\(urgency) job", urgency: urgency) {
            let here = (OperationQueue.current === shop.press, runningThreadClass())
            seen.withValue { $0 = here }
        }
        await waitUntil(
            "the \(urgency) job to print",
            hint: lesson.see("Quality of service, not thread priority"),
            givingUpWhen: {
                job.isFinished ? "the job finished before its printing ran, so the printing is not its own work" : nil
            }
        ) { seen.value != nil }
        guard let seen = seen.value else { return }

        let expected = expectedQuality(urgency)
        #expect(
            seen.onThePress,
            """
            The \(urgency) job's printing did not run as the job's own work on the press: it ran \
            in a completion block or on another queue, where the job's quality of service does \
            not reach. Keep the printing in the operation the press runs.
            \(lesson.see("Quality of service, not thread priority"))
            """
        )
        #expect(
            job.qualityOfService == expected,
            """
            The \(urgency) job carries quality of service \(spelled(job.qualityOfService)); the \
            table gives it \(spelled(expected)). Quality of service is the operation's own \
            setting: give it to the job, not to the press, before adding the job.
            \(lesson.see("Quality of service, not thread priority"))
            """
        )
        #if canImport(Darwin)
            // Darwin reports the class the printing thread ran at: raised perhaps, never lower.
            if let threadClass = seen.threadClass {
                #expect(
                    threadClass >= UInt32(expected.rawValue),
                    "The \(urgency) job printed on a thread of a lower quality of service than \(spelled(expected))."
                )
            }
        #endif
    }
}
