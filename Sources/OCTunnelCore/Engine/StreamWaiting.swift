/// What the loop and the stall watch ask a stream between pumps, without moving a byte:
/// whether it holds bytes, whether they could move though no socket event would say so, and
/// whether bytes wait on one side with room on the other (a stall), or it is right to wait.
extension Stream {
    /// Whether libssh2 holds data (or EOF) for this stream that nothing has delivered yet:
    /// the loop must not sleep while it does.
    func hasUndeliveredChannelData(_ live: LiveSession) -> Bool {
        guard let channel, downstream.isEmpty, !channelEOF, !readWaitsForTheVPS(live) else { return false }
        return channel.hasQueuedData || channel.isEOF
    }

    /// Whether the channel's last read was held back by a key exchange (`readHeldAt`) and
    /// nothing has come from the VPS since: reading again cannot succeed yet.
    func readWaitsForTheVPS(_ live: LiveSession) -> Bool {
        readHeldAt == live.session.receivedBytes
    }

    /// Whether this stream holds bytes for the channel (checked before polling it, no libssh2 call).
    var holdsBytesForChannel: Bool { !upstream.isEmpty }

    /// Whether the bytes this stream holds for the channel could move now, though nothing the
    /// loop polls would say so: the send buffer that held them back has drained below its
    /// high-water mark (the round's last flush does that), or the session has received
    /// something since the channel refused them (a window adjust, or the end of a key
    /// exchange, read by a call later in the round). The loop must not sleep on such a
    /// stream: no socket event would wake it (issue 29's missed wake-up).
    func mayMoveUpstream(_ live: LiveSession) -> Bool {
        guard let channel, failed == nil, !upstream.isEmpty, let upstreamBlocked else { return false }
        switch upstreamBlocked {
        case .sendRoom: return live.hasSendRoom
        case .channel(let receivedAt):
            return live.hasSendRoom && live.session.receivedBytes != receivedAt && channel.sendWindow > 0
        }
    }

    /// A description of the stall if bytes wait on one side with room on the other: queued in
    /// libssh2 while nothing waits for the client socket, or held for the channel while its
    /// window and the session's send buffer have room. Nil when it may rightly be waiting.
    func stallCandidate(_ live: LiveSession, seconds: Double) -> StreamStall? {
        guard let channel, failed == nil else { return nil }
        let toClient = downstream.isEmpty && !channelEOF && channel.hasQueuedData && !readWaitsForTheVPS(live)
        let toVPS = !upstream.isEmpty && live.hasSendRoom && channel.sendWindow > 0 && !waitsForTheVPS(live)
        guard toClient || toVPS else { return nil }
        let windows = channel.windows
        var held: String?
        switch upstreamBlocked {
        case .sendRoom?: held = "the send buffer was above its mark (\(live.session.outgoingBacklog) bytes wait for the socket now)"
        case .channel(let receivedAt)?:
            held = "the channel refused a write with its window open (a key exchange under way?); "
                + "\(live.session.receivedBytes - receivedAt) bytes received from the VPS since, "
                + "\(live.session.outgoingBacklog) bytes of ours wait for the socket, which "
                + (live.session.socketTakesMore ? "takes more" : "takes no more")
                + " (\(live.session.unacknowledgedBytes.map(String.init) ?? "?") bytes sent and not yet acknowledged)"
        case nil: held = nil
        }
        return StreamStall(id: id, direction: toClient ? .toClient : .toVPS, seconds: seconds, queuedInLibSSH2: windows.queued,
                           receiveWindow: windows.receive, sendWindow: windows.send, pendingToVPS: upstream.count,
                           pendingToClient: downstream.count, sent: sent, received: received, heldBecause: toClient ? nil : held)
    }

    /// Whether the channel refused these bytes with its window open (a key exchange under way)
    /// and the session has heard nothing since: the VPS owes the next packet, as it may for
    /// seconds while it works through what was sent before its key exchange (seen under load:
    /// 0 bytes from the VPS for 1-3 s). What of ours waits then is our part of the exchange,
    /// written by a call earlier in this very round and sent by the round's last flush (seen:
    /// 576 bytes, the socket taking more, nothing of ours unacknowledged). The stream is right
    /// to wait; a VPS that never answers is the keepalive's to find.
    private func waitsForTheVPS(_ live: LiveSession) -> Bool {
        guard case .channel(let receivedAt)? = upstreamBlocked else { return false }
        return live.session.receivedBytes == receivedAt
    }
}
