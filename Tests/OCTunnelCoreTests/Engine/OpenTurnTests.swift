@testable import OCTunnelCore
import Testing

@Suite("the session's turn for calls libssh2 keeps in the session", .ownThreads)
struct OpenTurnTests {
    final class Forward {}

    /// A turn whose round began with `a` taking it and `b`, asking next, refused.
    static func turn(heldBy a: Forward, refusing b: Forward) -> OpenTurn {
        var turn = OpenTurn()
        turn.beginRound()
        let aTook = turn.take(a), bRefused = !turn.take(b)
        #expect(aTook && bRefused)
        return turn
    }

    @Test("alone, a forward always gets the turn when it is free, and keeps it until it ends it")
    func alone() {
        var turn = OpenTurn()
        let a = Forward()
        for _ in 0..<3 {
            turn.beginRound()
            let first = turn.take(a), again = turn.take(a)
            #expect(first && again)
            turn.end(a)
            #expect(turn.isFree(for: a) && !turn.hasPriorityPending)
        }
    }

    @Test("one held, another refused: the refused one goes next, before the holder asks again")
    func refusedGoesNext() {
        let (a, b) = (Forward(), Forward())
        var turn = Self.turn(heldBy: a, refusing: b)
        #expect(!turn.isFree(for: b))
        turn.end(a)
        #expect(turn.hasPriorityPending)
        let aAgain = turn.take(a), bTook = turn.take(b)
        #expect(!aAgain, "the holder again, before the one that waited")
        #expect(bTook)
        turn.end(b)
        // a asked while b held it: a goes next.
        let bAgain = turn.take(b), aNext = turn.take(a)
        #expect(!bAgain && aNext)
    }

    @Test("a forward that stopped asking holds nobody up: its priority lapses after a full round")
    func priorityLapses() {
        let (a, b) = (Forward(), Forward())
        var turn = Self.turn(heldBy: a, refusing: b)
        turn.end(a)
        // b never asks again (its client left).
        let aRefused = !turn.take(a)
        #expect(aRefused)
        turn.beginRound()
        #expect(!turn.isFree(for: a), "b keeps its priority for the next round")
        turn.beginRound()
        let aLater = turn.take(a)
        #expect(aLater, "a full round later it has lapsed")
        #expect(!turn.hasPriorityPending)
    }
}
