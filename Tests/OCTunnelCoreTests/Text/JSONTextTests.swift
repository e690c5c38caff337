import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `JSONText`: the JSON lines octunnel writes, keys sorted without ICU, the same text
/// `JSONSerialization` with `.sortedKeys` wrote for octunnel's own objects.
@Suite("JSON lines with sorted keys, without ICU", .ownThreads)
struct JSONTextTests {
    @Test(
        "the same text as JSONSerialization's sorted keys for event and status objects: nested objects and arrays, booleans, integers, doubles, escapes, slashes, non-ASCII"
    )
    func sameAsFoundation() throws {
        let objects: [[String: Any]] = [
            [
                "event": "forwarding", "status": "connected", "localHost": "127.0.0.1", "localPort": 4096,
                "alsoLocal": ["[::1]:4096"], "openCode": true,
            ],
            [
                "event": "notification", "kind": "finished", "title": "Fix \"login\" / \\x1b ✓ 日本", "seconds": 0.25,
                "ms": 12, "nothing": NSNull(),
            ],
            [
                "forwards": [
                    ["local": "127.0.0.1:3000", "remote": "127.0.0.1:18081", "open": 0], ["local": "b", "remote": "a"],
                ],
                "health": ["ok": false, "checkedAt": "2026-11-26T03:36:04.000Z"], "notifications": [] as [Any],
                "empty": [:] as [String: Any],
            ],
            try #require(
                JSONSerialization.jsonObject(with: Data(#"{"b":true,"a":1,"c":1.5,"d":[false,0,"x"]}"#.utf8))
                    as? [String: Any]),
        ]
        for object in objects {
            let theirs = String(
                decoding: try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
            #expect(JSONText.line(object) == theirs)
        }
    }

    @Test(
        "laid out, the same text as JSONSerialization's pretty-printed sorted keys for a config.json: nested profiles, empty objects and arrays, escapes"
    )
    func prettySameAsFoundation() throws {
        let objects: [[String: Any]] = [
            [
                "version": 1,
                "profiles": [
                    "default": [
                        "tunnel": [
                            "target": "me@vps.example.net:22",
                            "forwards": ["3000:127.0.0.1:18081", "5173:127.0.0.1:18082"],
                            "warm": 4, "notify": false, "notifyCommand": "/home/me/bin/push \"x\" ✓",
                            "unknown": [:] as [String: Any],
                            "list": [] as [Any], "ratio": 0.5, "nothing": NSNull(),
                        ]
                    ],
                    "work": ["home": ["forwards": [["vps": 18080, "home": 4096]]]],
                ],
            ],
            [:],
        ]
        for object in objects {
            let theirs = String(
                decoding: try JSONSerialization.data(
                    withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]),
                as: UTF8.self)
            #expect(JSONText.pretty(object) == theirs)
        }
        #expect(JSONText.pretty(["date": Date()]) == nil)
    }

    @Test("keys in code-point order, a value JSON cannot hold gives {} as before")
    func orderAndRefusal() {
        #expect(JSONText.line(["b": 1, "B": 2, "a10": 3, "a9": 4]) == #"{"B":2,"a10":3,"a9":4,"b":1}"#)
        #expect(JSONText.line(["date": Date()]) == "{}")
        #expect(JSONText.line(["nan": Double.nan]) == "{}")
    }
}
