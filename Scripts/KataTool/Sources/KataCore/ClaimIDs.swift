/// Claim ids such as `C17`, as the specs, lessons and patches write them.
enum ClaimIDs {
    /// Every claim id in `text`, in order of appearance, each once.
    static func all(in text: some StringProtocol) -> [String] {
        var found: [String] = []
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let startsWord = index == 0 || !isWordCharacter(characters[index - 1])
            if startsWord, characters[index] == "C", index + 1 < characters.count, characters[index + 1].isASCII,
                characters[index + 1].isNumber
            {
                var end = index + 1
                while end < characters.count, characters[end].isASCII, characters[end].isNumber { end += 1 }
                if end == characters.count || !isWordCharacter(characters[end]) {
                    let id = String(characters[index..<end])
                    if !found.contains(id) { found.append(id) }
                }
                index = end
            } else {
                index += 1
            }
        }
        return found
    }

    /// Sorts ids by their number: C9 before C10.
    static func sorted(_ ids: some Sequence<String>) -> [String] {
        ids.sorted { (Int($0.dropFirst()) ?? 0) < (Int($1.dropFirst()) ?? 0) }
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }
}
