import OCTunnelLibc

/// The operating system's feed of address and route changes, as a non-blocking descriptor the
/// loop polls: an rtnetlink socket on Linux (the IPv4 and IPv6 address and route groups), a
/// PF_ROUTE socket on macOS. The only place that knows either wire format.
enum RoutingSocket {
    /// One change the kernel announced.
    enum Change: Equatable, Sendable {
        case addressAdded(String)
        case addressRemoved(String)
        case routeChanged
        case linkChanged
    }

    /// Opens the socket (non-blocking, close-on-exec); nil where the system refuses one, so
    /// the loop runs on without (keepalive still finds a dead session).
    static func open() -> OwnedDescriptor? {
        #if os(Linux)
            let fd = Syscall.socket(AF_NETLINK, .raw, [.nonBlocking, .closeOnExec], protocol: 0 /* NETLINK_ROUTE */)
            guard fd >= 0 else { return nil }
            let socket = OwnedDescriptor(fd)
            // struct sockaddr_nl { sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups; }
            var address = [UInt8](repeating: 0, count: 12)
            let family = UInt16(AF_NETLINK)
            address[0] = UInt8(family & 0xFF)
            address[1] = UInt8(family >> 8)
            let groups = linuxGroups.littleEndian
            withUnsafeBytes(of: groups) { for (index, byte) in $0.enumerated() { address[8 + index] = byte } }
            let bound = address.withUnsafeBytes { bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), 12) }
            return bound == 0 ? socket : nil
        #elseif os(macOS)
            // route(4): a raw PF_ROUTE socket hears every routing message of the system (protocol
            // AF_UNSPEC: all address families); nothing needs binding.
            let fd = Syscall.socket(PF_ROUTE, .raw, [.nonBlocking, .closeOnExec], protocol: AF_UNSPEC)
            return fd >= 0 ? OwnedDescriptor(fd) : nil
        #else
            return nil
        #endif
    }

    #if os(Linux)
        /// RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE (linux/rtnetlink.h).
        static let linuxGroups: UInt32 = 0x10 | 0x40 | 0x100 | 0x400
    #endif

    /// Reads every message waiting on `socket` (never blocks) and returns the changes they
    /// announce; an overrun (ENOBUFS: the kernel dropped messages) reads as a route change.
    static func drain(_ socket: OwnedDescriptor) -> [Change] {
        var changes: [Change] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            switch socket.receive(&buffer, buffer.count, flags: Int32(MSG_DONTWAIT)) {
            case .moved(let count): changes += parse(buffer[..<count])
            case .failed(let error) where error.rawValue == ENOBUFS: changes.append(.routeChanged)
            case .end, .again, .failed: return changes
            }
        }
    }

    /// The changes in one datagram of `bytes`.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [Change] {
        #if os(Linux)
            return parseNetlink(Array(bytes))
        #elseif os(macOS)
            return parseRouteMessages(Array(bytes))
        #else
            return []
        #endif
    }

    private static func u16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ at: Int) -> Int { u16(b, at) | u16(b, at + 2) << 16 }

    /// struct nlmsghdr { u32 len; u16 type; u16 flags; u32 seq; u32 pid } then, for addresses,
    /// struct ifaddrmsg { u8 family; u8 prefixlen; u8 flags; u8 scope; u32 index } and rtattrs.
    static func parseNetlink(_ b: [UInt8]) -> [Change] {
        var changes: [Change] = []
        var offset = 0
        while offset + 16 <= b.count {
            let length = u32(b, offset), type = u16(b, offset + 4)
            guard length >= 16, offset + length <= b.count else { break }
            switch type {
            case 20, 21: // RTM_NEWADDR, RTM_DELADDR
                let address = netlinkAddress(b, from: offset + 16, to: offset + length) ?? "?"
                changes.append(type == 20 ? .addressAdded(address) : .addressRemoved(address))
            case 24, 25: // RTM_NEWROUTE, RTM_DELROUTE
                changes.append(.routeChanged)
            default:
                break
            }
            offset += (length + 3) & ~3
        }
        return changes
    }

    /// The IFA_LOCAL (else IFA_ADDRESS) attribute of an ifaddrmsg, as text.
    private static func netlinkAddress(_ b: [UInt8], from start: Int, to end: Int) -> String? {
        guard start + 8 <= end else { return nil }
        let family = Int32(b[start])
        var offset = start + 8
        var found: String?
        while offset + 4 <= end {
            let length = u16(b, offset), type = u16(b, offset + 2)
            guard length >= 4, offset + length <= end else { break }
            let payload = Array(b[(offset + 4)..<(offset + length)])
            if type == 2 /* IFA_LOCAL */ || (type == 1 /* IFA_ADDRESS */ && found == nil) {
                found = InterfaceAddresses.text(family: family, bytes: payload) ?? found
            }
            offset += (length + 3) & ~3
        }
        return found
    }

    /// macOS's routing messages (route(4), net/route.h, net/if.h), parsed on any system so the
    /// tests here can run them. Every message starts { u16 msglen; u8 version; u8 type; … }:
    /// RTM_NEWADDR (0xc), RTM_DELADDR (0xd), RTM_IFINFO (0xe), RTM_ADD (0x1), RTM_DELETE (0x2),
    /// RTM_CHANGE (0x3).
    static func parseRouteMessages(_ b: [UInt8]) -> [Change] {
        var changes: [Change] = []
        var offset = 0
        while offset + 4 <= b.count {
            let length = u16(b, offset), type = Int(b[offset + 3])
            guard length >= 4, offset + length <= b.count else { break }
            switch type {
            case 0xc: changes.append(.addressAdded(routeMessageAddress(b, from: offset, to: offset + length) ?? "?"))
            case 0xd: changes.append(.addressRemoved(routeMessageAddress(b, from: offset, to: offset + length) ?? "?"))
            case 0xe: changes.append(.linkChanged)
            case 0x1, 0x2, 0x3: changes.append(.routeChanged)
            default: break
            }
            offset += length
        }
        return changes
    }

    /// The interface address (RTA_IFA) of an address message: struct ifa_msghdr is 20 bytes
    /// (u16 msglen, u8 version, u8 type, i32 ifam_addrs, i32 flags, u16 index, 2 of padding,
    /// i32 metric), then one sockaddr per bit set in `ifam_addrs`, lowest bit first (RTA_DST 0x1,
    /// RTA_GATEWAY 0x2, RTA_NETMASK 0x4, RTA_GENMASK 0x8, RTA_IFP 0x10, RTA_IFA 0x20, …), each
    /// padded to 4 bytes (a zero `sa_len` still takes 4).
    private static func routeMessageAddress(_ b: [UInt8], from start: Int, to end: Int) -> String? {
        guard start + 20 <= end else { return nil }
        let present = u32(b, start + 4)
        var offset = start + 20
        for bit in 0..<8 where present & (1 << bit) != 0 {
            guard offset < end else { return nil }
            let length = Int(b[offset])
            if 1 << bit == 0x20 { return darwinAddress(b, at: offset, length: length, end: end) }
            offset += length > 0 ? 1 + ((length - 1) | 3) : 4
        }
        return nil
    }

    /// A macOS sockaddr { u8 sa_len; u8 sa_family; … } as text: AF_INET (2) has its address at
    /// byte 4, AF_INET6 (30) at byte 8.
    private static func darwinAddress(_ b: [UInt8], at offset: Int, length: Int, end: Int) -> String? {
        guard offset + 2 <= end, offset + length <= end else { return nil }
        switch b[offset + 1] {
        case 2 where length >= 8:
            return InterfaceAddresses.text(family: AF_INET, bytes: Array(b[(offset + 4)..<(offset + 8)]))
        case 30 where length >= 24:
            return InterfaceAddresses.text(family: AF_INET6, bytes: Array(b[(offset + 8)..<(offset + 24)]))
        default: return nil
        }
    }
}
