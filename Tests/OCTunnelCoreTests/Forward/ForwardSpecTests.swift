import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("a forward's text parsed once, its bind given later when the text leaves it out", .ownThreads)
struct ForwardSpecTests {
    @Test(
        "without BIND the spec keeps none, and the forward takes the default it is given; with BIND the default is ignored"
    )
    func bindGivenLater() throws {
        let spec = try ForwardSpec.parse("3000:127.0.0.1:18081", direction: .local)
        #expect(
            spec.bind == nil && spec.listenPort == 3000 && spec.targetHost == "127.0.0.1" && spec.targetPort == 18081)
        #expect(try spec.forward(defaultBind: "::1").listen == HostPort(host: "::1", port: 3000))
        #expect(try spec.forward(defaultBind: "localhost").listen == HostPort(host: "127.0.0.1", port: 3000))
        let written = try ForwardSpec.parse("[::1]:18081:127.0.0.1:3000", direction: .remote)
        #expect(try written.forward(defaultBind: "10.0.0.1").listen == HostPort(host: "::1", port: 18081))
    }

    @Test("a -L default bind that is a name is refused as a written one is, quoting the text as typed")
    func nameAsDefaultBind() throws {
        let spec = try ForwardSpec.parse("3000:127.0.0.1:18081", direction: .local)
        #expect { try spec.forward(defaultBind: "example.com") } throws: { error in
            (error as? TargetParseError)?.message
                == "-L \"3000:127.0.0.1:18081\" listens on \"example.com\", which is not an IP address of this machine: give 127.0.0.1, ::1 or localhost"
        }
    }
}
