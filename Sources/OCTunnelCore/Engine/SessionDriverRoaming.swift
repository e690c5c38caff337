/// What the driver does when the session may have died unnoticed: the keepalive's verdicts,
/// and the roaming causes (a network change, a wake, a reconnect request, a client after a
/// silence) acted on through `ReconnectState` and `RoamingDecision`.
extension SessionDriver {
    /// Declares the session dead, or probes it, or hears a quick probe's answer.
    func checkKeepalive(_ live: LiveSession, now: Double) {
        switch live.keepalive.check(now: now, channel: live.established.idleChannel) {
        case .alive: break
        case .silent(let seconds): live.fail(.silence(seconds: seconds))
        case .failed(let code): live.fail(code)
        case .answered(let seconds): if let event = reconnect.probeAnswered(in: seconds) { say(event) }
        case .unanswered(let seconds): live.fail(reconnect.probeUnanswered(after: seconds))
        }
    }

    /// Acts on a network change, a wake, a reconnect request, or a client arriving after a
    /// silence: reconnect now (the session's address is gone, or asked to), else a quick probe.
    func roam(_ live: LiveSession, now: Double) {
        let keepalive = live.keepalive
        let quietFor = keepalive.isQuiet(now: now) && !keepalive.isProbing ? now - keepalive.lastInbound : nil
        guard let noticed = reconnect.causeToActOn(clientsArrived: forwards.reduce(0) { $0 + $1.takeArrivals() } > 0, quietFor: quietFor, now: now)
        else { return }
        let socket = live.session.socket
        let decision = RoamingDecision.decide(noticed.cause, localAddress: InterfaceAddresses.local(of: socket),
                                              addresses: InterfaceAddresses.current(),
                                              roundTrip: InterfaceAddresses.roundTripTime(of: socket), now: now)
        let (step, event) = reconnect.act(on: noticed, decision: decision, allowsOverlap: forwards.allSatisfy(\.allowsOverlap), now: now)
        say(event)
        switch step {
        case .probe(let deadline):
            live.keepalive.probeNow(now: now, deadline: deadline)
        case .replace:
            if !connector.isRunning { startConnector() }
        case .drop(let end, let sayGoodbye):
            if sayGoodbye {
                // The VPS frees what the session held (a remote forward's port) at once.
                live.session.disconnect(reason: "reconnecting")
                _ = live.session.flushOutgoing()
            }
            live.fail(end)
        }
    }

    /// A network change, a wake or a request while no session is up: the next attempt starts
    /// now, not when the backoff would have let it; one that began on the old network may wait
    /// out its whole connect timeout on a path that is gone, so it is abandoned.
    func roamWithoutSession(_ noticed: ReconnectState.Noticed, now: Double) {
        guard let step = reconnect.actWithoutSession(on: noticed, attemptStartedAt: connector.isRunning ? connector.startedAt : nil,
                                                     now: now) else { return }
        if step.abandonAttempt { connector.abandon() }
        record.roamed("\(noticed.cause.headline): attempting now")
        emit(.roaming(step.event))
    }

    /// Emits a roaming event and keeps its line for `status`.
    func say(_ event: RoamingEvent) {
        record.roamed(event.text)
        emit(.roaming(event))
    }
}
