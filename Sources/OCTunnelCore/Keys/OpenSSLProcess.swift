import COpenSSL

/// OpenSSL's set-up for the whole process, made before anything else calls it.
public enum OpenSSLProcess {
    /// Initialises libcrypto without its exit-time cleanup (`OPENSSL_INIT_NO_ATEXIT`). That
    /// cleanup frees every thread's OpenSSL state and assumes no thread is still ending; a
    /// command that exits right after its engine thread said it was done (`tunnel check`)
    /// races the thread's own destructor, and the two free the same block (AddressSanitizer:
    /// "attempting double-free" in OPENSSL_cleanup, one case in 479 tests; a C reproduction,
    /// a thread that signals and ends while main exits, fails 3 times in 300 under ASan, 0
    /// with this flag; openssl/openssl#6214). The process's memory goes back to the system
    /// at exit anyway. Only the first initialisation chooses, so the executable calls this
    /// first of all.
    public static func prepare() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
