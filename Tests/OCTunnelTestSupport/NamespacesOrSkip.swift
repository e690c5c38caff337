import Foundation
import Testing

/// Runs `make`, which builds the test's network namespaces. Where this machine cannot make them
/// at all (no `ip`, not root, `ip netns add` refused), the test is cancelled: a visible skip with
/// its reason, on stderr and in the test's result, never a silent pass.
public func namespacesOrSkip<T>(_ test: String, _ make: () throws -> T) throws -> T {
    do {
        return try make()
    } catch let unavailable as NetworkNamespacesUnavailable {
        try skipForNamespaces(test, unavailable)
    }
}

/// `namespacesOrSkip` for set-ups that run off the test pool.
public func namespacesOrSkip<T>(_ test: String, _ make: () async throws -> T) async throws -> T {
    do {
        return try await make()
    } catch let unavailable as NetworkNamespacesUnavailable {
        try skipForNamespaces(test, unavailable)
    }
}

private func skipForNamespaces(_ test: String, _ unavailable: NetworkNamespacesUnavailable) throws -> Never {
    FileHandle.standardError.write(
        Data("\(test) skipped: network namespaces unavailable: \(unavailable.reason)\n".utf8))
    try Test.cancel("network namespaces unavailable here: \(unavailable.reason)")
}
