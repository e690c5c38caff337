/// The line on stderr (`notify: …`, an engine event, also in `--json`), for every moment told:
/// always there, told at once, never queued. A permission's line says how to answer it
/// (`AgentMoment.line`).
final class StderrChannel: NotificationChannel {
    let name = "stderr"
    let immediate = true

    func deliver(_ moment: AgentMoment, context: ChannelContext) {
        context.emit(.notification(moment))
    }
}
