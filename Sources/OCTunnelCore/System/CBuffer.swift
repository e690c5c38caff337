extension String {
    /// The text a system call wrote into a buffer of C characters, up to its first NUL (the
    /// whole buffer if there is none), decoded as UTF-8.
    init(filledBuffer buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
