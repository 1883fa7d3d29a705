import Chapter6
import Foundation
import KataTestSupport
import Testing

@Suite("A job is fully configured before the press receives it")
struct ConfigurationSpecs {
    // Set queuePriority and qualityOfService before addOperation: once the queue has the job,
    // a change may come too late, and platforms differ on whether it counts at all.
    // Covers: C48, C49
    @Test(
        "the press receives each job with its priority and quality of service already set",
        arguments: Urgency.allCases
    )
    func configuredBeforeHandOff(_ urgency: Urgency) async {
        let press = WatchedPress()
        let shop = PrintShop(press: press)
        let printed = Protected(false)
        shop.pause()
        let title = "\(urgency) leaflets"
        shop.submit(title, urgency: urgency) { printed.withValue { $0 = true } }

        let handOff = press.firstHandOff(of: title)
        #expect(
            handOff != nil,
            """
            The shop never added "\(title)" to its press with addOperation; hand each job \
            to the press queue.
            \(lesson.see("Configure before you enqueue"))
            """
        )
        if let handOff {
            let wanted = (spelled(expectedPriority(urgency)), spelled(expectedQuality(urgency)))
            #expect(
                handOff.priority == wanted.0 && handOff.quality == wanted.1,
                """
                When the press received the \(urgency) job it carried queue priority \
                \(handOff.priority) and quality of service \(handOff.quality); it should already \
                carry \(wanted.0) and \(wanted.1). Configure a job before adding it: \
                a priority changed afterwards may come too late.
                \(lesson.see("Configure before you enqueue"))
                """
            )
        }

        shop.resume()
        await waitUntil("the \(urgency) leaflets to print once the press resumed") { printed.value }
    }
}
