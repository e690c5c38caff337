/// Bytes waiting to go one way: only what the other side could not take yet.
struct PendingBytes {
    private var storage: [UInt8] = []
    private var offset = 0

    var count: Int { storage.count - offset }
    var isEmpty: Bool { offset == storage.count }

    mutating func set(_ bytes: UnsafeRawBufferPointer) {
        storage = Array(bytes)
        offset = 0
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if offset > 0 {
            storage.removeFirst(offset)
            offset = 0
        }
        storage.append(contentsOf: bytes)
    }

    mutating func consume(_ n: Int) {
        offset += n
        if offset >= storage.count {
            storage = []
            offset = 0
        }
    }

    func withHead<T>(_ body: (UnsafeRawPointer, Int) -> T) -> T {
        storage.withUnsafeBytes { body($0.baseAddress! + offset, count) }
    }
}

/// The one buffer every fresh read goes through (256 KiB, shared by all streams of a loop);
/// only what the other side does not take is copied out of it.
final class ScratchBuffer {
    let size: Int
    let pointer: UnsafeMutableRawPointer

    init(size: Int = 256 * 1024) {
        self.size = size
        pointer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    }

    deinit { pointer.deallocate() }
}
