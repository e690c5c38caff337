import Foundation

/// Reads what a server offers in its KEXINIT, to say why nothing could be agreed.
enum ServerAlgorithmProbe {
    struct Offers {
        let keyExchange: String
        let hostKeys: String
        let ciphers: String
        let macs: String

        /// Each list as names.
        var lists: [AlgorithmGap.List: [String]] {
            func names(_ text: String) -> [String] { text.split(separator: ",").map(String.init) }
            return [
                .hostKey: names(hostKeys), .keyExchange: names(keyExchange), .cipher: names(ciphers), .mac: names(macs),
            ]
        }
    }

    static func offers(host: String, port: Int, timeout: Double) -> Offers? {
        guard let socket = try? Sockets.connect(host: host, port: port, timeout: min(timeout, 5)) else { return nil }
        defer { socket.close() }
        socket.setReceiveTimeout(seconds: 5)
        let hello = Array("SSH-2.0-octunnel_probe\r\n".utf8)
        guard socket.transmit(hello, hello.count) == .moved(hello.count) else { return nil }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var payloadStart: Int?
        while data.count < 65536 {
            let count = socket.receive(&buffer, buffer.count).count
            if count <= 0 { return nil }
            data += buffer[..<count]
            if payloadStart == nil, let range = findBannerEnd(data) { payloadStart = range }
            if let start = payloadStart, data.count >= start + 5 {
                var reader = SSHWireReader(data[start...])
                guard let length = try? reader.uint32(), length < 65536 else { return nil }
                guard data.count >= start + 4 + Int(length) else { continue }
                var packet = SSHWireReader(data[(start + 4)..<(start + 4 + Int(length))])
                guard (try? packet.byte()) != nil, (try? packet.byte()) == 20, (try? packet.raw(16)) != nil,
                    let kex = try? packet.text(), let hostKeys = try? packet.text(),
                    let ciphers = try? packet.text(), (try? packet.text()) != nil,
                    let macs = try? packet.text()
                else { return nil }
                return Offers(keyExchange: kex, hostKeys: hostKeys, ciphers: ciphers, macs: macs)
            }
        }
        return nil
    }

    private static func findBannerEnd(_ data: [UInt8]) -> Int? {
        var lineStart = 0
        for (index, byte) in data.enumerated() where byte == UInt8(ascii: "\n") {
            if data[lineStart...].starts(with: Array("SSH-".utf8)) { return index + 1 }
            lineStart = index + 1
        }
        return nil
    }
}
