import OCTunnelTestSupport
import Testing

@testable import OCTunnelCore

/// Blowfish's initial state as bcrypt_pbkdf reads it from its text: every word there, in order,
/// against the published constants (Schneier's tables: the hex digits of pi).
@Suite("Blowfish's initial state", .ownThreads)
struct BlowfishTablesTests {
    /// The first and last word of P and of each S-box, as Blowfish's specification prints them.
    static let published: [(index: Int, word: UInt32)] = [
        (0, 0x243f_6a88), (17, 0x8979_fb1b),
        (18, 0xd131_0ba6), (18 + 255, 0x6e85_076a),
        (18 + 256, 0x4b7a_70e9), (18 + 511, 0xdb83_adf7),
        (18 + 512, 0xe93d_5a68), (18 + 767, 0x4060_00e0),
        (18 + 768, 0x3a39_ce37), (18 + 1023, 0x3ac3_72e6),
    ]

    @Test func holdsEveryWordOfPiInOrder() {
        let words = BlowfishTables.words
        #expect(words.count == 1042)
        for (index, word) in Self.published {
            #expect(words[index] == word, "word \(index)")
        }
        // FNV-1a over the words as they stood in array literals before (checked there
        // against pi's first 8,336 hex digits with mpmath): a word out of place or mistyped changes it.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for word in words { hash = (hash ^ UInt64(word)) &* 0x100_0000_01b3 }
        #expect(hash == 0x9750_db20_3610_970d)
    }
}
