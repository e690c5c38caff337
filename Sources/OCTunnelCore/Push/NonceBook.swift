import Foundation

/// The single-use nonces of the buttons octunnel pushed: each one bound to one request and one
/// answer, valid until `lifetime` passes or any button of its request is used. Bounded: past
/// `capacity` the oldest requests' nonces are dropped (their buttons then send nothing). Nonces
/// are 128 random bits; a tap's nonce is compared with every stored one in constant time, so how
/// long a check takes says nothing about how close a guess was.
public final class NonceBook: @unchecked Sendable {
    /// One button's nonce and what it answers.
    public struct Entry: Sendable, Equatable {
        public let requestID: String
        public let directory: String?
        public let answer: PushAnswer
        let nonce: [UInt8]
        let expires: Date
    }

    /// Why a tap sends nothing.
    public enum Refusal: String, Sendable, Equatable {
        /// No button ever held this nonce (or it was dropped long ago).
        case forged
        /// The nonce was already used, or another button of its request was.
        case replayed
        /// The nonce's time passed.
        case expired
        /// The nonce belongs to another request than the tap names.
        case otherRequest = "cross-request"
    }

    public static let nonceBytes = 16
    public let capacity: Int
    /// This book's tag in its buttons' taps (`PushTap.sender`): random, so that the other end's
    /// taps on a shared reply topic are told apart from forged ones.
    public let sender: String
    public let lifetime: TimeInterval
    private var live: [Entry] = []
    /// Nonces used or retired, to tell a replay from a forgery (bounded as `live`).
    private var spent: [(nonce: [UInt8], expired: Bool)] = []
    private let lock = NSLock()

    public init(capacity: Int = 300, lifetime: TimeInterval = 12 * 3600) {
        (self.capacity, self.lifetime) = (capacity, lifetime)
        var generator = SystemRandomNumberGenerator()
        sender = Self.hex((0..<PushTap.senderDigits / 2).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// New nonces for `answers` of request `requestID` (hex, 32 characters each), in order; any
    /// nonces the request had before are retired.
    public func issue(requestID: String, directory: String?, answers: [PushAnswer], now: Date = Date()) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        retire(where: { $0.requestID == requestID }, expired: false)
        var nonces: [String] = []
        for answer in answers {
            var generator = SystemRandomNumberGenerator()
            let nonce = (0..<Self.nonceBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
            live.append(
                Entry(requestID: requestID, directory: directory, answer: answer, nonce: nonce, expires: now + lifetime)
            )
            nonces.append(Self.hex(nonce))
        }
        if live.count > capacity { retire(live.prefix(live.count - capacity).map(\.nonce), expired: true) }
        return nonces
    }

    /// The entry `nonce` (hex) of `requestID` answers, used up with every other nonce of its
    /// request; or why it answers nothing.
    public func take(requestID: String, nonce text: String, now: Date = Date()) -> Result<Entry, RefusalError> {
        guard let nonce = Self.bytes(hex: text) else { return .failure(RefusalError(.forged)) }
        lock.lock()
        defer { lock.unlock() }
        var found: Int?
        for index in live.indices where Self.equal(live[index].nonce, nonce) { found = index }
        guard let index = found else {
            var seen: Bool?
            for item in spent where Self.equal(item.nonce, nonce) { seen = item.expired }
            return .failure(RefusalError(seen.map { $0 ? .expired : .replayed } ?? .forged))
        }
        let entry = live[index]
        guard entry.requestID == requestID else { return .failure(RefusalError(.otherRequest)) }
        guard entry.expires > now else {
            retire(where: { $0.requestID == requestID }, expired: true)
            return .failure(RefusalError(.expired))
        }
        retire(where: { $0.requestID == requestID }, expired: false)
        return .success(entry)
    }

    /// Retires every nonce of `requestID` (it was answered elsewhere): its buttons send nothing.
    public func retire(requestID: String) {
        lock.lock()
        defer { lock.unlock() }
        retire(where: { $0.requestID == requestID }, expired: false)
    }

    /// How many nonces can still answer.
    public var liveCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return live.count
    }

    /// A `Refusal` as an error (a `Result`'s failure).
    public struct RefusalError: Error, Sendable, Equatable {
        public let refusal: Refusal
        init(_ refusal: Refusal) { self.refusal = refusal }
    }

    private func retire(where matches: (Entry) -> Bool, expired: Bool) {
        retire(live.filter(matches).map(\.nonce), expired: expired)
    }

    private func retire(_ nonces: [[UInt8]], expired: Bool) {
        guard !nonces.isEmpty else { return }
        live.removeAll { entry in nonces.contains { $0 == entry.nonce } }
        spent.append(contentsOf: nonces.map { ($0, expired) })
        if spent.count > capacity * 4 { spent.removeFirst(spent.count - capacity * 4) }
    }

    /// Compares two nonces in time that depends only on their lengths.
    static func equal(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).leftPadded(2) }.joined()
    }

    /// 32 lowercase hex digits as bytes; nil for anything else.
    static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == nonceBytes * 2 else { return nil }
        var bytes: [UInt8] = []
        for pair in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[pair]), let low = value(digits[pair + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x61...0x66: digit - 0x61 + 10
        default: nil
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
