import Chapter1
import Foundation
import KataTestSupport
import Testing

extension Chapter1Specs {
    @Suite("A sum works on the numbers it started with")
    struct CopySpecs {
        // Hint: this runs in a child process because the bug it looks for crashes. The sum reads
        // the live list while the main queue shrinks it; give each sum its own copy.
        // Covers: C2, C5
        @Test("removing numbers while a sum runs cannot crash it")
        func shrinkingTheListDuringASumIsSafe() async {
            await #expect(
                processExitsWith: .success,
                """
                The app crashed (or showed the wrong total) when numbers were removed while a sum \
                was running. A sum that counts the live list and then reads it number by number \
                runs off its end when the list shrinks.
                \(lesson.see("Give the work its own copy"))
                """
            ) {
                await ShrinkingListScenario.run()
            }
        }
    }
}

/// The list shrinks from four numbers to one while the first sum is between numbers.
enum ShrinkingListScenario {
    @MainActor
    static func run() async {
        let driver = SumDriver()
        let screen = Recorder<Redraw>()
        let adder = ListAdder(numbers: [1, 2, 3], probe: driver.probe)
        adder.draw(into: screen)

        adder.add(4)  // run 1 adds up [1, 2, 3, 4]
        driver.pacer(1).allow(1)
        guard await waitUntil("run 1 to reach its second number", { driver.pacer(1).arrivals == 2 }) else {
            exit(EXIT_FAILURE)
        }
        adder.remove(at: 3)
        adder.remove(at: 2)
        adder.remove(at: 1)  // runs 2, 3 and 4; the list is now [1]
        driver.releaseAll()

        let settled = await waitUntil("run 1 to stop and the screen to show the total of [1]") {
            driver.numbersAdded(by: 1) != nil && screen.all.last?.text == "1"
        }
        if !settled { exit(EXIT_FAILURE) }
    }
}
