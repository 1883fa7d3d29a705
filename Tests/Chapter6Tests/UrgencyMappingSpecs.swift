import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("Each urgency maps onto a queue priority and a quality of service", .watched)
struct UrgencyMappingSpecs {
    // Look at Urgency.queuePriority and the lesson's table: the press picks among ready jobs by
    // queuePriority, so the urgencies need distinct, descending priorities.
    // Covers: C43
    // Paths: values
    @Test("a more urgent job gets a higher queue priority", arguments: Urgency.allCases)
    func queuePriority(of urgency: Urgency) {
        let expected = expectedPriority(urgency)
        #expect(
            urgency.queuePriority == expected,
            """
            Urgency.\(urgency) maps onto queue priority \(spelled(urgency.queuePriority)); \
            the table gives it \(spelled(expected)). A one-at-a-time press is not first in, \
            first out: among ready jobs it starts the one with the highest queue priority, \
            so each urgency needs its own rank.
            \(lesson.see("A one-at-a-time queue is not first-in-first-out"))
            """
        )
    }

    // Look at Urgency.qualityOfService and the lesson's table: Swift has no threadPriority on
    // Linux; quality of service takes its place. Name the case, never a raw value.
    // Covers: C49
    // Paths: values
    @Test("a more urgent job never runs at a lower quality of service", arguments: Urgency.allCases)
    func qualityOfService(of urgency: Urgency) {
        let expected = expectedQuality(urgency)
        #expect(
            urgency.qualityOfService == expected,
            """
            Urgency.\(urgency) maps onto quality of service \(spelled(urgency.qualityOfService)); \
            the table gives it \(spelled(expected)). Quality of service replaces the guide's \
            thread priority: a class of work, named by its case, that tells the system how much \
            of the machine the job's work may use.
            \(lesson.see("Quality of service, not thread priority"))
            """
        )
    }
}
