import OCTunnelCore

/// The one printer of `tunnel up`'s and `home up`'s events: with --json one JSON line each on
/// stdout, else one line of text on stderr (client lines only with --verbose).
struct EventPrinter: Sendable {
    let json: Bool
    let verbose: Bool

    func show(_ event: UpEvent) {
        if json {
            Console.data(jsonLine(event.jsonObject))
        } else if let text = event.text, verbose || !event.isVerbose {
            Console.say(text)
        }
    }
}
