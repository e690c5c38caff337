import OCTunnelLibc

/// The addresses this machine has now, and the one a connected socket uses.
enum InterfaceAddresses {
    /// Every address on every interface (`getifaddrs`), as text; nil when it cannot be read.
    static func current() -> Set<String>? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var result = Set<String>()
        var node = list
        while let entry = node {
            if let address = entry.pointee.ifa_addr, let text = text(of: address) { result.insert(text) }
            node = entry.pointee.ifa_next
        }
        return result
    }

    /// The local address of connected `socket` (`getsockname`), as text.
    static func local(of socket: OwnedDescriptor) -> String? {
        guard var storage = Sockets.localAddress(of: socket.number) else { return nil }
        return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { text(of: $0) } }
    }

    /// The local address the kernel would choose now for a new connection to connected `socket`'s
    /// peer: a UDP socket connected there (which sends nothing), then `getsockname`. Nil when no
    /// route leads there or the peer cannot be read.
    static func preferredSource(toward socket: OwnedDescriptor) -> String? {
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let read = withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket.number, $0, &length) }
        }
        guard read == 0 else { return nil }
        let probe = Syscall.socket(Int32(peer.ss_family), .datagram, [.closeOnExec])
        guard probe >= 0 else { return nil }
        defer { close(probe) }
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Syscall.connect(probe, $0, length) }
        }
        guard connected == 0, var source = Sockets.localAddress(of: probe) else { return nil }
        return withUnsafePointer(to: &source) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { text(of: $0) } }
    }

    /// The smoothed round-trip time the kernel measured on TCP `socket`, in seconds
    /// (Linux `TCP_INFO`'s `tcpi_rtt`); nil where it is not known.
    static func roundTripTime(of socket: OwnedDescriptor) -> Double? {
        #if os(Linux)
            // struct tcp_info: tcpi_rtt (µs) is the u32 at byte 68 (linux/tcp.h, stable since 2.6).
            var info = [UInt8](repeating: 0, count: 232)
            var length = socklen_t(info.count)
            guard getsockopt(socket.number, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0, length >= 72 else {
                return nil
            }
            let micros = Int(info[68]) | Int(info[69]) << 8 | Int(info[70]) << 16 | Int(info[71]) << 24
            return micros > 0 ? Double(micros) / 1e6 : nil
        #else
            return nil
        #endif
    }

    static func text(of address: UnsafePointer<sockaddr>) -> String? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr) { text(family: AF_INET, bytes: Array($0)) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { text(family: AF_INET6, bytes: Array($0)) }
            }
        default:
            return nil
        }
    }

    /// `inet_ntop` of 4 or 16 address bytes.
    static func text(family: Int32, bytes: [UInt8]) -> String? {
        guard (family == AF_INET && bytes.count >= 4) || (family == AF_INET6 && bytes.count >= 16) else { return nil }
        var out = [CChar](repeating: 0, count: 64)
        guard inet_ntop(family, bytes, &out, socklen_t(out.count)) != nil else { return nil }
        return String(filledBuffer: out)
    }
}
