/// A set that remembers at most `capacity` members, forgetting the oldest first: what a peer
/// can fill without end (the ids of requests already told) stays bounded, and a member is
/// forgotten only after `capacity` newer ones.
struct BoundedSet<Element: Hashable & Sendable>: Sendable {
    let capacity: Int
    private var members = Set<Element>()
    /// The members in the order they came; those before `start` are forgotten already.
    private var order: [Element] = []
    private var start = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    var count: Int { members.count }

    func contains(_ element: Element) -> Bool { members.contains(element) }

    /// Adds `element`; false when it was there already. Past the capacity the oldest goes.
    @discardableResult
    mutating func insert(_ element: Element) -> Bool {
        guard members.insert(element).inserted else { return false }
        order.append(element)
        if members.count > capacity {
            members.remove(order[start])
            start += 1
            // The forgotten front is dropped in one go once it is as long as what is kept.
            if start >= capacity {
                order.removeFirst(start)
                start = 0
            }
        }
        return true
    }
}
