import Foundation

/// What the session driver calls to open a session: blocking (resolve, TCP, handshake, host
/// key, authentication for libssh2's `SSHConnector`), run on the connector's thread, so the
/// loop keeps serving. Tests give one that hands out in-memory sessions, so a whole
/// `SessionDriver` runs without sshd.
protocol SessionOpener: Sendable {
    /// Opens one authenticated session with its idle `session` channel, telling each stage
    /// as it ends; throws what the user is told.
    func open(onStage: (StageReport) -> Void) throws -> OpenedSession
}

/// An authenticated session as the engine drives it, with its idle `session` channel and what
/// the user is told of it; handed from the connector's thread to the loop's, then used there only.
final class OpenedSession: @unchecked Sendable {
    let session: any EngineSession
    let idleChannel: any EngineChannel
    let info: SessionInfo

    init(session: any EngineSession, idleChannel: any EngineChannel, info: SessionInfo) {
        self.session = session
        self.idleChannel = idleChannel
        self.info = info
    }
}
