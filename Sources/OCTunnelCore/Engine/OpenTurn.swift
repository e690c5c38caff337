/// Whose turn it is to make a call whose state libssh2 keeps in the session, not the channel:
/// a channel open (channel.c:144) or a listen request. While such a call would block, the next
/// one on the session must be the same call again, so the session's forwards take turns: the
/// one holding the turn repeats its call until it ends the turn.
///
/// Fair without a queue that could outlive its askers: a forward refused the turn while another
/// held it gets the next one first, for the rest of that round and the next (`beginRound`);
/// after that anyone may take it, so a forward that stopped asking can never hold the others
/// up. Alone on its session, a forward always has the turn when it is free.
struct OpenTurn {
    private var holder: ObjectIdentifier?
    /// Refused while the turn was held: they go first once it ends.
    private var asked: Set<ObjectIdentifier> = []
    /// Those of `asked` the ended turn goes to first, until round `firstUntil`.
    private var first: Set<ObjectIdentifier> = []
    private var firstUntil = 0
    private var round = 0

    /// A new round of the loop: a priority older than a full round lapses.
    mutating func beginRound() {
        round += 1
        if round > firstUntil { first.removeAll() }
    }

    /// Whether the turn is `owner`'s now: taken when free and nobody has priority over it;
    /// otherwise `owner` is remembered as asking.
    mutating func take(_ owner: AnyObject) -> Bool {
        let id = ObjectIdentifier(owner)
        if holder == id { return true }
        if isFree(for: id) {
            holder = id
            first.removeAll()
            asked.remove(id)
            return true
        }
        asked.insert(id)
        return false
    }

    /// Whether `take(owner)` would give `owner` the turn now.
    func isFree(for owner: AnyObject) -> Bool { isFree(for: ObjectIdentifier(owner)) }

    private func isFree(for id: ObjectIdentifier) -> Bool {
        holder == id || (holder == nil && (first.isEmpty || first.contains(id)))
    }

    /// `owner`'s call is over: those refused meanwhile go first.
    mutating func end(_ owner: AnyObject) {
        let id = ObjectIdentifier(owner)
        guard holder == id else { return }
        holder = nil
        asked.remove(id)
        first = asked
        asked.removeAll()
        firstUntil = round + 1
    }

    /// Whether a priority is pending: the loop should run its next round at once, so the
    /// forwards that have it ask (or it lapses) without waiting for another wake-up.
    var hasPriorityPending: Bool { holder == nil && !first.isEmpty }
}
