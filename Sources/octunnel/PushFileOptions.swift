import ArgumentParser

/// The push's token and CA files, as `push setup` and `tunnel up`/`home up` take them: paths
/// refused when they hold a control character (they are echoed in messages).
struct PushFileOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A file holding an ntfy access token (only you may read it), sent as Authorization: Bearer.",
            valueName: "PATH"))
    var pushTokenFile: String?

    @Option(
        help: ArgumentHelp(
            "A CA certificate file trusted beside the system's, for an ntfy server with its own CA.", valueName: "PATH")
    )
    var pushCaFile: String?

    func validate() throws {
        try refuseControlCharacters(pushTokenFile, option: "--push-token-file")
        try refuseControlCharacters(pushCaFile, option: "--push-ca-file")
    }
}
