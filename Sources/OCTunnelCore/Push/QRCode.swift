import CQRencode

/// A QR code of a short text, made by libqrencode (`QRcode_encodeString8bit`, error correction M)
/// and drawn for a terminal with half blocks (two modules a character, dark on light, with the
/// four-module quiet zone a phone's camera needs). The only file that imports CQRencode.
public struct QRCode: Sendable, Equatable {
    /// Modules a side.
    public let width: Int
    /// Row by row, true for a dark module.
    public let modules: [[Bool]]

    /// The code of `text`; nil when libqrencode cannot encode it (too long).
    public init?(_ text: String) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else { return nil }
        self.width = width
        modules = (0..<width).map { row in (0..<width).map { column in data[row * width + column] & 1 == 1 } }
    }

    /// The code as lines of text: a dark module is blank on a light background, as a phone reads a
    /// code on a dark terminal too (light modules drawn with full and half blocks).
    public var terminalLines: [String] {
        let quiet = 4
        let size = width + 2 * quiet
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (r, c) = (row - quiet, column - quiet)
            guard (0..<width).contains(r), (0..<width).contains(c) else { return false }
            return modules[r][c]
        }
        return stride(from: 0, to: size, by: 2).map { row in
            String(
                (0..<size).map { column -> Character in
                    switch (dark(row, column), row + 1 < size ? dark(row + 1, column) : false) {
                    case (false, false): "\u{2588}"
                    case (false, true): "\u{2580}"
                    case (true, false): "\u{2584}"
                    case (true, true): " "
                    }
                })
        }
    }
}
